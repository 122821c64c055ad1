"""JVP rules of the backward kernels (and of `softmax_cross_entropy_backward`, the loss
group's kernel): what forward-over-reverse (`rlx-hvp`) pushes tangents through.

A kernel `bwd(x, .., dy)` is linear in its cotangent `dy`, so its tangent is

    bwd(x, .., t_dy) + (∂bwd/∂x) t_x

The first term is the kernel itself on `t_dy` (and on the tangent of any other
operand it is linear in: a norm's gamma, either conv operand). The second is zero
almost everywhere for kernels whose dependence on x is piecewise constant (relu's
mask, max pooling's argmax, the indices of a gather, cumsum and mean pooling, which
do not read x). Otherwise it is pushed through the primitives of the kernel's
`rlx-decompose-backward` rule with those primitives' JVP rules: activations' second
derivatives, the norms' and softmax's Hessians and attention's all come from
there, so a kernel and its derivative share one formula (the decomposition the
kernels are tested against). `stop_gradient` has zero tangent (as `jax.lax.stop_gradient`).
The mask of attention gets no tangent, as it gets no gradient. `mir.scan_backward`
(the structured group's reverse sweep) is rebuilt as one sweep over
(gradient, tangent of the gradient).
"""

from __future__ import annotations

from xdsl.ir import Operation, Region, SSAValue

from rlx_xdsl.autodiff.emit import add_tangents, zeros_like
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, JvpRule, OutTangents, Rebuilt, Tangents, zero_tangent
from rlx_xdsl.autodiff.jvp_rules.common import jvp_of_expansion, linear_in, linear_rule
from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyBackwardOp
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.dialects.mir.structured import ScanBackwardOp
from rlx_xdsl.ir.emitter import Emitter


def decomposed_term(e: Emitter, op: Operation, tangents: Tangents, smooth: tuple[int, ...]) -> SSAValue | None:
    """`(∂op/∂operands) t` for the operands `smooth`, through the op's decomposition."""
    from rlx_xdsl import layers
    from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS

    if all(tangents[i] is None for i in smooth):
        return None
    layers.load("decompose-backward")
    only = [t if i in smooth else None for i, t in enumerate(tangents)]
    return jvp_of_expansion(e, op, only, DECOMPOSITIONS[type(op)])[0]


def kernel_rule(linear: tuple[int, ...], smooth: tuple[int, ...] = ()) -> JvpRule:
    """The rule of a kernel linear in each operand of `linear` (by index) whose other
    differentiable operands, `smooth`, go through its decomposition (the rest are
    piecewise constant or carry no tangent)."""

    def rule(e: Emitter, op: Operation, tangents: Tangents) -> OutTangents:
        return [add_tangents(e, linear_in(e, op, tangents, *linear), decomposed_term(e, op, tangents, smooth))]

    return rule


RULES: dict[type[Operation], JvpRule] = {
    bw.ReluBackwardOp: linear_rule(1),  # x: a 0/1 mask
    bw.ActivationBackwardOp: kernel_rule(linear=(1,), smooth=(0,)),
    bw.LayerNormBackwardInputOp: kernel_rule(linear=(1, 2), smooth=(0,)),  # g = dy * gamma
    bw.LayerNormBackwardGammaOp: kernel_rule(linear=(1,), smooth=(0,)),
    bw.RmsNormBackwardInputOp: kernel_rule(linear=(1, 2), smooth=(0,)),
    bw.RmsNormBackwardGammaOp: kernel_rule(linear=(1,), smooth=(0,)),
    bw.RmsNormBackwardBetaOp: linear_rule(0),
    bw.GroupNormBackwardInputOp: kernel_rule(linear=(1, 2), smooth=(0,)),
    bw.GroupNormBackwardGammaOp: kernel_rule(linear=(1,), smooth=(0,)),
    bw.GroupNormBackwardBetaOp: linear_rule(0),
    # rope_backward(dy, cos, sin): affine, not linear, in (cos, sin) when n_rot < head_dim
    bw.RopeBackwardOp: kernel_rule(linear=(0,), smooth=(1, 2)),
    bw.AttentionBackwardOp: kernel_rule(linear=(3,), smooth=(0, 1, 2)),
    bw.ConvBackwardInputOp: linear_rule(0, 1),  # bilinear in (dy, w)
    bw.ConvBackwardWeightOp: linear_rule(0, 1),  # bilinear in (x, dy)
    bw.PoolBackwardOp: linear_rule(1),  # x: the argmax (max) or nothing (mean)
    bw.CumsumBackwardOp: linear_rule(0),
    bw.GatherBackwardOp: linear_rule(0),
    SoftmaxCrossEntropyBackwardOp: kernel_rule(linear=(2,), smooth=(0,)),
}

for op_class, rule in RULES.items():
    JVP_RULES.add(op_class, rule)
JVP_RULES.register(bw.StopGradientOp)(zero_tangent)


@JVP_RULES.register(ScanBackwardOp)
def scan_backward(e: Emitter, op: ScanBackwardOp, tangents: Tangents) -> Rebuilt:
    """One reverse sweep over `(carry, tangent carry)`: the gradient `d` and its tangent `t_d`.

    The sweep's state is the gradient of the carries, which the vjp body maps
    `(c, x_t, d_next) -> (d_c, d_x_t)`; its tangent is that body pushed forward,
    `(c, t_c, x_t, t_x_t, d_next, t_d_next) -> (d_c, t_d_c, d_x_t, t_d_x_t)`. So the
    rebuilt op sweeps the carries `(c, t_c)` read from the trajectory and its
    tangent, with upstream `(u, t_u)`, xs `(x, t_x)`, and, with checkpoints, the
    forward body pushed forward to recompute `(c, t_c)` between them. Every tangent
    is kept (zeros for a zero one): the carries' gradients mix them all.
    """
    from rlx_xdsl.autodiff.jvp import jvp_region

    n, m = len(op.init), len(op.xs)
    full = [t if t is not None else zeros_like(e, v) for v, t in zip(op.operands, tangents)]
    init, trajectory, upstream, xs = (op.operands[i : i + k] for i, k in ((0, n), (n, n), (2 * n, n), (3 * n, m)))
    t_init, t_trajectory, t_upstream, t_xs = (full[i : i + k] for i, k in ((0, n), (n, n), (2 * n, n), (3 * n, m)))
    vjp, _ = jvp_region(op.vjp, [True] * (2 * n + m), [n, m, n], required=[True] * (n + m))
    interleave_yield(vjp, n, m)
    forward = None
    if op.forward is not None:
        forward, _ = jvp_region(op.forward, [True] * (n + m), [n, m], required=[True] * n)
    rebuilt = ScanBackwardOp(
        [*init, *t_init],
        [*trajectory, *t_trajectory],
        [*upstream, *t_upstream],
        vjp,
        length=op.steps,
        xs=[*xs, *t_xs],
        save_trajectory=op.saves_trajectory,
        num_checkpoints=op.checkpoints,
        forward=forward,
    )
    e.insert(rebuilt)
    out = list(rebuilt.gradients)
    return Rebuilt([*out[:n], *out[2 * n : 2 * n + m]], [*out[n : 2 * n], *out[2 * n + m :]])


def interleave_yield(region: Region, n: int, m: int) -> None:
    """`(d_c..., d_x..., t_d_c..., t_d_x...)` yielded as `(d_c..., t_d_c..., d_x..., t_d_x...)`:
    the gradient of each carry slot, then of each xs slot, as `mir.scan_backward` returns them."""
    block = region.block
    old = block.last_op
    assert isinstance(old, YieldOp)
    v = list(old.values)
    new = YieldOp(*v[:n], *v[n + m : 2 * n + m], *v[n : n + m], *v[2 * n + m :])
    new.location = old.location
    block.insert_op_before(new, old)
    block.erase_op(old)
