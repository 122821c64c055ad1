"""Structured ops: `mir.scan` and its reverse sweep as `lax.scan`, `mir.custom_fn` as
`jax.custom_vjp`/`custom_jvp`, and the Mamba / Gated DeltaNet recurrences as `lax.scan`
over time (each traces one step, whatever the length)."""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, operands_of, result_dtype, widen
from rlx_xdsl.dialects.mir import structured as st


def _scan(op: st.ScanOp, *arrays, run_block):
    get = operands_of(op, arrays)
    init = tuple(get(v) for v in op.init)
    bcasts = tuple(get(v) for v in op.bcasts)
    xs = tuple(get(v) for v in op.xs)

    def step(carry, x_t):
        nxt = tuple(run_block(op.body.block, (*carry, *bcasts, *x_t)))
        return nxt, (nxt if op.saves_trajectory else None)

    final, trajectory = jax.lax.scan(step, init, xs, length=op.steps)
    if not op.saves_trajectory:
        return final
    rows = np.asarray(op.saved_steps())
    return tuple(t if len(rows) == op.steps else t[rows] for t in trajectory)


def _scan_backward(op: st.ScanBackwardOp, *arrays, run_block):
    """The vjp body from the last step to the first; carries entering each step come from
    the trajectory, recomputed with the `forward` body from the latest saved row."""
    get = operands_of(op, arrays)
    init = tuple(get(v) for v in op.init)
    trajectory = tuple(get(v) for v in op.trajectory)
    upstream = tuple(get(v) for v in op.upstream)
    xs = tuple(get(v) for v in op.xs)
    steps, saved = op.steps, op.saved_steps()
    row_of = {s: r for r, s in enumerate(saved)}
    # Step t starts from row_of[t - 1] when that step was saved, else from what the forward body gave.
    restart = np.array([t - 1 in row_of for t in range(steps)])
    rows = np.array([row_of.get(t - 1, 0) for t in range(steps)])

    if op.recomputes:

        def forward(carry, inputs):
            again, saved_rows, x_t = inputs
            entering = tuple(jnp.where(again, s, c) for s, c in zip(saved_rows, carry))
            return tuple(run_block(op.forward.block, (*entering, *x_t))), entering

        restart_rows = tuple(t[rows] for t in trajectory)
        _, entering = jax.lax.scan(forward, init, (jnp.asarray(restart), restart_rows, xs), length=steps)
    else:
        entering = tuple(jnp.concatenate([c[None], t[:-1]]) for c, t in zip(init, trajectory))

    def with_upstream(u, c):
        zeros = jnp.zeros((steps, *c.shape), u.dtype)
        return zeros.at[np.asarray(saved)].set(u) if op.saves_trajectory else zeros.at[steps - 1].set(u)

    ups = tuple(with_upstream(u, c) for u, c in zip(upstream, init))

    def sweep(d, inputs):
        c_t, x_t, up_t = inputs
        d = tuple(a + b for a, b in zip(d, up_t))
        grads = run_block(op.vjp.block, (*c_t, *x_t, *d))
        return tuple(grads[: len(init)]), tuple(grads[len(init) :])

    d0 = tuple(jnp.zeros_like(u[0]) for u in ups)
    d_init, d_xs = jax.lax.scan(sweep, d0, (entering, xs, ups), length=steps, reverse=True)
    return (*d_init, *d_xs)


def _custom_fn(op: st.CustomFnOp, *inputs, run_block):
    """`forward`, differentiated by JAX through the op's own `vjp` or `jvp` body.

    With both bodies, `run_block.custom_rule` picks one (JAX takes one rule per function:
    `jax.jvp` refuses a `custom_vjp`). Integer inputs have no cotangent in JAX (`float0`),
    so a function taking any is traced without its rules (its value is the same).
    """

    def forward(*xs):
        return tuple(run_block(op.forward.block, xs))

    has_vjp, has_jvp = op.vjp is not None, op.jvp is not None
    if not all(jnp.issubdtype(x.dtype, jnp.inexact) for x in inputs) or not (has_vjp or has_jvp):
        return forward(*inputs)
    if has_jvp and (not has_vjp or run_block.custom_rule == "jvp"):
        fn = jax.custom_jvp(forward)

        @fn.defjvp
        def jvp(xs, txs):
            ys = forward(*xs)
            return ys, tuple(run_block(op.jvp.block, (*xs, *ys, *txs)))

        return fn(*inputs)
    fn = jax.custom_vjp(forward)

    def fwd(*xs):
        ys = forward(*xs)
        return ys, (xs, ys)

    def bwd(res, dys):
        xs, ys = res
        grads = run_block(op.vjp.block, (*xs, *ys, *dys))
        return tuple(g.astype(x.dtype) for g, x in zip(grads, xs))

    fn.defvjp(fwd, bwd)
    return fn(*inputs)


def _stages(dtype):
    """Rounds a stage's result to the op's dtype, as the ops of the unfused expansion do
    (a no-op for f32; f16/bf16 stages compute in f32 and round once each)."""
    return lambda t: t.astype(dtype).astype(widen(jnp.zeros((), dtype)).dtype)


def _selective_scan(op: st.SelectiveScanOp, x, delta, a, b, c, **_):
    """`h = exp(delta a) h + delta x b`, `y = c . h` per step (state `[B, H, N]`, zero at first)."""
    r = _stages(x.dtype)
    x, delta, a, b, c = map(widen, (x, delta, a, b, c))

    def step(h, inputs):
        x_t, d_t, b_t, c_t = inputs  # [B, H], [B, H], [B, N], [B, N]
        decay = r(jnp.exp(r(d_t[..., None] * a)))
        drive = r(r(d_t * x_t)[..., None] * b_t[:, None, :])
        h = r(r(decay * h) + drive)
        return h, r(jnp.einsum("bhn,bn->bh", h, c_t))

    h0 = jnp.zeros((x.shape[0], x.shape[2], a.shape[1]), x.dtype)
    _, ys = jax.lax.scan(step, h0, tuple(jnp.moveaxis(t, 1, 0) for t in (x, delta, b, c)))
    return (jnp.moveaxis(ys, 0, 1).astype(result_dtype(op)),)


def _gated_delta_net(op: st.GatedDeltaNetOp, *arrays, **_):
    """Per head `M = M exp(g)`, `d = (v - k M) beta`, `M += k d^T`, `o = q M / sqrt(N)`."""
    get = operands_of(op, arrays)
    r = _stages(get(op.q).dtype)
    q, k, v, g, beta = (widen(get(t)) for t in (op.q, op.k, op.v, op.g, op.beta))
    batch, _, heads, n = q.shape
    state = get(op.state)
    m0 = jnp.zeros((batch, heads, n, n), q.dtype) if state is None else widen(state)

    def step(m, inputs):
        q_t, k_t, v_t, g_t, beta_t = inputs
        m = r(m * r(jnp.exp(g_t))[..., None, None])
        d = r(r(v_t - r(jnp.einsum("bhi,bhij->bhj", k_t, m))) * beta_t[..., None])
        m = r(m + r(k_t[..., :, None] * d[..., None, :]))
        return m, r(r(jnp.einsum("bhi,bhij->bhj", q_t, m)) / jnp.sqrt(jnp.asarray(n, q.dtype)))

    final, out = jax.lax.scan(step, m0, tuple(jnp.moveaxis(t, 1, 0) for t in (q, k, v, g, beta)))
    out = jnp.moveaxis(out, 0, 1).astype(result_dtype(op))
    return (out,) if state is None else (out, final.astype(result_dtype(op, 1)))


JAX_OPS.add(st.ScanOp, _scan)
JAX_OPS.add(st.ScanBackwardOp, _scan_backward)
JAX_OPS.add(st.CustomFnOp, _custom_fn)
JAX_OPS.add(st.SelectiveScanOp, _selective_scan)
JAX_OPS.add(st.GatedDeltaNetOp, _gated_delta_net)
