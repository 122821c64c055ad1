"""Tensors MIR ops against independent oracles: scans against Python loops and finite
differences, checkpointing against the full trajectory (with the carries it saves),
custom functions, and the state-space recurrences against scalar reference loops."""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.transforms.dead_code_elimination import DeadCodeElimination
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.structured import (
    CustomFnOp,
    GatedDeltaNetOp,
    ScanBackwardOp,
    ScanOp,
    checkpoint_steps,
)
from rlx_xdsl.dialects.traits import RegionSignatureInterface
from rlx_xdsl.interpreters.mir.structured import observe_scans
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.transforms.specialize import SpecializeShapesPass

RNG = np.random.default_rng(14)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-structured.mlir"


def rand(*shape, dtype=np.float32, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(dtype)


def module_of(build, *arg_specs):
    """A verified `@f(args) = build(b, *args)`; arg_specs are (shape, dtype) pairs."""
    b = GraphBuilder("f")
    args = [b.input(f"a{i}", shape, dtype) for i, (shape, dtype) in enumerate(arg_specs)]
    out = build(b, *args)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    module = b.module()
    module.verify()
    return module


def run(module, *inputs):
    return run_function(module, "f", [np.asarray(x) for x in inputs])


def the_op(module, op_class):
    (op,) = [o for o in module.walk() if isinstance(o, op_class)]
    return op


# checkpoint_steps ------------------------------------------------------------------------


@pytest.mark.parametrize(("length", "count"), [(1, 1), (8, 3), (9, 3), (10, 1), (6, 6), (100, 7), (7, 5)])
def test_checkpoints_split_the_loop_into_nearly_equal_segments(length, count):
    steps = checkpoint_steps(length, count)
    assert len(steps) == count and steps[-1] == length - 1
    segments = np.diff([-1, *steps])
    assert segments.min() >= 1 and segments.max() - segments.min() <= 1
    assert steps == [math.ceil((k + 1) * length / count) - 1 for k in range(count)]


# mir.scan ------------------------------------------------------------------------------------


def rnn_step(rb, h, w, x):
    """h' = tanh(h @ w + x) on row vectors [1, H]."""
    return rb.tanh(rb.add(rb.matmul(h, w), x))


def python_rnn(h, w, xs):
    trajectory = []
    for x in xs:
        h = np.tanh(h @ w + x)
        trajectory.append(h)
    return h, np.stack(trajectory)


def rnn_module(length, **options):
    def build(b, h, w, xs):
        return b.scan_with_bcasts_and_xs(h, [w], [xs], rnn_step, length) if not options else b.scan(
            h, rnn_step, length, bcasts=[w], xs=[xs], **options
        )

    return module_of(build, ([1, 3], "f32"), ([3, 3], "f32"), ([length, 1, 3], "f32"))


RNN_INPUTS = (rand(1, 3), rand(3, 3, scale=0.6), rand(9, 1, 3))


def test_scan_with_bcasts_and_xs_matches_a_python_loop():
    (h,) = run(rnn_module(9), *RNN_INPUTS)
    np.testing.assert_allclose(h, python_rnn(*RNN_INPUTS)[0], rtol=1e-5, atol=1e-6)


def test_scan_trajectory_row_t_is_the_carry_after_step_t():
    (trajectory,) = run(rnn_module(9, save_trajectory=True), *RNN_INPUTS)
    assert trajectory.shape == (9, 1, 3)
    np.testing.assert_allclose(trajectory, python_rnn(*RNN_INPUTS)[1], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("count", [1, 2, 4, 9])
def test_checkpointed_trajectory_keeps_the_rows_at_checkpoint_steps(count):
    (rows,) = run(rnn_module(9, save_trajectory=True, num_checkpoints=count), *RNN_INPUTS)
    expected = python_rnn(*RNN_INPUTS)[1][[math.ceil((k + 1) * 9 / count) - 1 for k in range(count)]]
    assert rows.shape == (count, 1, 3)
    np.testing.assert_allclose(rows, expected, rtol=1e-5, atol=1e-6)


def test_checkpoints_without_a_trajectory_do_not_change_the_result():
    (plain,) = run(rnn_module(9), *RNN_INPUTS)
    (marked,) = run(rnn_module(9, num_checkpoints=3), *RNN_INPUTS)
    np.testing.assert_array_equal(marked, plain)


def test_plain_scan_and_several_carries_of_different_dtypes():
    """(x, n) -> (x * 0.5 + 1, n + 2) five times, with an i32 counter as a second carry."""

    def build(b, x, n):
        def body(rb, x, n):
            return rb.add(rb.mul(x, rb.constant(np.float64(0.5))), rb.constant(np.float64(1))), rb.add(
                n, rb.constant(np.int32(2))
            )

        return b.scan([x, n], body, 5)

    module = module_of(build, ([2], "f64"), ([], "i32"))
    x, n = run(module, np.array([4.0, -8.0]), np.int32(3))
    expected = np.array([4.0, -8.0])
    for _ in range(5):
        expected = expected * 0.5 + 1
    np.testing.assert_array_equal(x, expected)
    assert n.dtype == np.int32 and n == 13


def test_scan_with_xs_passes_rank0_slices_of_rank1_xs():
    def build(b, total, xs):
        return b.scan_with_xs(total, [xs], lambda rb, c, x: rb.add(c, rb.mul(x, x)), 6)

    xs = rand(6)
    (total,) = run(module_of(build, ([], "f32"), ([6], "f32")), np.float32(0), xs)
    np.testing.assert_allclose(total, np.sum(xs.astype(np.float64) ** 2), rtol=1e-6)


def test_bf16_carry_stays_bf16():
    def build(b, h):
        return b.scan_trajectory(h, lambda rb, h: rb.mul(h, rb.constant(np.float32(3), "bf16")), 3)

    (traj,) = run(module_of(build, ([2], "bf16")), np.array([1.0, -0.5], ml_dtypes.bfloat16))
    assert traj.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(traj.astype(np.float32), [[3, -1.5], [9, -4.5], [27, -13.5]])


def test_scan_round_trips_through_text_and_runs_the_same():
    module = rnn_module(9, save_trajectory=True, num_checkpoints=4)
    reparsed = parse_module(str(module))
    reparsed.verify()
    assert str(reparsed) == str(module)
    np.testing.assert_array_equal(run(reparsed, *RNN_INPUTS)[0], run(module, *RNN_INPUTS)[0])


def test_forward_scan_saves_exactly_its_checkpoints():
    """The interpreter keeps K carries for a K-checkpoint trajectory, `length` for a full one, none otherwise."""
    expected = {(False, None): 0, (True, None): 9, (True, 3): 3, (False, 3): 0, (True, 1): 1}
    for (save, count), saved in expected.items():
        with observe_scans() as records:
            run(rnn_module(9, save_trajectory=save, num_checkpoints=count), *RNN_INPUTS)
        (record,) = records
        assert (record.op, record.peak_saved, record.body_runs) == ("mir.scan", saved, 9)


def test_dynamic_xs_with_the_wrong_row_count_fail_at_run_time():
    def build(b, h, xs):
        return b.scan_with_xs(h, [xs], lambda rb, c, x: rb.add(c, x), 5)

    module = module_of(build, ([2], "f32"), ([DYNAMIC, 2], "f32"))
    with pytest.raises(Exception, match=r"'mir.scan' xs #0 has 3 rows at run time, expected 5"):
        run(module, rand(2), rand(3, 2))


def test_a_body_that_resizes_its_carry_fails_at_run_time():
    """Types with `?` dims allow it; the loop does not (a trajectory could not be stacked)."""

    def build(b, h):
        return b.scan_trajectory(h, lambda rb, c: rb.concat(c, c, axis=0), 3)

    module = module_of(build, ([DYNAMIC], "f32"))
    with pytest.raises(Exception, match=r"'mir.scan' step 0 changed carry #0 from shape \[2\] to \[4\]"):
        run(module, rand(2))


def test_scan_checkpointed_builder_rejects_counts_outside_1_to_length():
    b = GraphBuilder("f")
    h = b.input("h", [4])
    for count in (0, 5):
        with pytest.raises(VerifyException, match=f"'mir.scan' num_checkpoints must be in 1..=4, got {count}"):
            b.scan_checkpointed(h, lambda rb, c: c, 4, count)


# mir.scan_backward ---------------------------------------------------------------------------
#
# The forward step (h, c, x) -> (h', c') with h' = tanh(0.5 h + x), c' = c + h', and its
# hand-written vjp: g = (dh' + dc') (1 - h'^2); (dh, dc, dx) = (0.5 g, dc', g).


def step_body(rb, h, c, x):
    y = rb.tanh(rb.add(rb.mul(h, rb.constant(np.float64(0.5))), x))
    return y, rb.add(c, y)


def step_vjp(rb, h, c, x, dh_next, dc_next):
    y, _ = step_body(rb, h, c, x)
    g = rb.mul(rb.add(dh_next, dc_next), rb.sub(rb.constant(np.float64(1)), rb.mul(y, y)))
    return rb.mul(g, rb.constant(np.float64(0.5))), dc_next, g


def python_forward(h, c, xs):
    rows = []
    for x in xs:
        h = np.tanh(0.5 * h + x)
        c = c + h
        rows.append((h, c))
    return rows


def python_loss(h0, c0, xs, upstream, save, count):
    """The scalar whose gradient scan_backward computes: upstream . (scan results)."""
    rows = python_forward(h0, c0, xs)
    if not save:
        return float(np.sum(upstream[0] * rows[-1][0]) + np.sum(upstream[1] * rows[-1][1]))
    saved = [rows[t] for t in checkpoint_steps(len(xs), count or len(xs))]
    return float(sum(np.sum(uh * h) + np.sum(uc * c) for (h, c), uh, uc in zip(saved, *upstream)))


def finite_difference(f, x, eps=1e-6):
    grad = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        up, down = x.copy(), x.copy()
        up[i] += eps
        down[i] -= eps
        grad[i] = (f(up) - f(down)) / (2 * eps)
    return grad


def backward_module(length, save, count):
    """`@f(h0, c0, xs, upstream...)`: the scan's trajectory, then scan_backward over it."""
    rows = count or length

    def build(b, h0, c0, xs, uh, uc):
        trajectory = b.scan([h0, c0], step_body, length, xs=[xs], save_trajectory=True, num_checkpoints=count)
        forward = step_body if rows < length else None
        return b.scan_backward(
            [h0, c0], trajectory, [uh, uc], step_vjp, length,
            xs=[xs], save_trajectory=save, num_checkpoints=count, forward=forward,
        )  # fmt: skip

    up_shape = [rows, 3] if save else [3]
    specs = [([3], "f64"), ([3], "f64"), ([length, 3], "f64"), (up_shape, "f64"), (up_shape, "f64")]
    return module_of(build, *specs)


@pytest.mark.parametrize(
    ("length", "save", "count"),
    [(6, False, None), (6, True, None), (7, False, 3), (7, True, 3), (5, True, 5), (8, False, 1), (1, True, 1)],
)
def test_scan_backward_matches_finite_differences(length, save, count):
    rows = count or length
    h0, c0, xs = rand(3, dtype=np.float64), rand(3, dtype=np.float64), rand(length, 3, dtype=np.float64)
    upstream = (rand(rows, 3, dtype=np.float64), rand(rows, 3, dtype=np.float64)) if save else (
        rand(3, dtype=np.float64), rand(3, dtype=np.float64))  # fmt: skip
    d_h0, d_c0, d_xs = run(backward_module(length, save, count), h0, c0, xs, *upstream)

    def loss(h=h0, c=c0, x=xs):
        return python_loss(h, c, x, upstream, save, count)

    np.testing.assert_allclose(d_h0, finite_difference(lambda h: loss(h=h), h0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_c0, finite_difference(lambda c: loss(c=c), c0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(d_xs, finite_difference(lambda x: loss(x=x), xs), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("length", "count"), [(13, 3), (16, 4), (100, 10), (100, 1), (37, 36), (2, 1)])
@pytest.mark.parametrize("save", [False, True])
def test_checkpointed_backward_recomputes_what_the_full_trajectory_saved(length, count, save):
    """Exactly the gradients of the every-step trajectory, holding K + ceil(log2(segment)) carries.

    The forward scan keeps exactly K carries; the sweep recomputes each segment from its
    checkpoint by bisection, holding at most ceil(log2(longest segment)) more carries at
    once and running the forward body O(length log segment) times. (A per-row upstream
    of K rows is the every-step upstream that is zero off the checkpoint steps.)
    """
    h0, c0, xs = rand(3, dtype=np.float64), rand(3, dtype=np.float64), rand(length, 3, dtype=np.float64)
    steps = checkpoint_steps(length, count)
    if save:
        upstream = [rand(count, 3, dtype=np.float64) for _ in range(2)]
        every_step = [np.zeros((length, 3)) for _ in range(2)]
        for rows, full in zip(upstream, every_step):
            full[steps] = rows
    else:
        upstream = every_step = [rand(3, dtype=np.float64) for _ in range(2)]
    full = run(backward_module(length, save, None), h0, c0, xs, *every_step)
    with observe_scans() as records:
        checkpointed = run(backward_module(length, save, count), h0, c0, xs, *upstream)
    for a, b in zip(full, checkpointed, strict=True):
        np.testing.assert_array_equal(a, b)
    forward, backward = records
    assert forward.peak_saved == count
    longest = int(np.diff([-1, *steps]).max())
    depth = math.ceil(math.log2(longest)) if longest > 1 else 0
    assert backward.peak_saved <= depth
    recomputed = backward.body_runs - length  # every step runs the vjp body once
    assert recomputed <= length * max(depth, 1)


def test_checkpointed_backward_with_per_row_upstream_matches_finite_differences_at_scale():
    """save_trajectory + K checkpoints on a longer scan: upstream rows enter at their checkpoint steps."""
    length, count = 20, 4
    h0, c0, xs = rand(3, dtype=np.float64), rand(3, dtype=np.float64), rand(length, 3, dtype=np.float64)
    upstream = (rand(count, 3, dtype=np.float64), rand(count, 3, dtype=np.float64))
    _, _, d_xs = run(backward_module(length, True, count), h0, c0, xs, *upstream)
    expected = finite_difference(lambda x: python_loss(h0, c0, x, upstream, True, count), xs)
    np.testing.assert_allclose(d_xs, expected, rtol=1e-6, atol=1e-8)


# mir.custom_fn -----------------------------------------------------------------------------


def test_custom_fn_runs_its_forward_body_with_several_results():
    def build(b, x, n):
        return b.custom_fn_multi([x, n], lambda rb, x, n: (rb.mul(x, x), rb.add(n, n), rb.exp(x)))

    x, n = rand(4), np.array([3, -7], np.int32)
    square, twice, e = run(module_of(build, ([4], "f32"), ([2], "i32")), x, n)
    np.testing.assert_array_equal(square, x * x)
    assert twice.dtype == np.int32 and twice.tolist() == [6, -14]
    np.testing.assert_allclose(e, np.exp(x), rtol=1e-6)


def test_custom_fn_multi_returns_a_tuple_even_for_one_result():
    b = GraphBuilder("f")
    x = b.input("x", [2])
    (y,) = b.custom_fn_multi([x], lambda rb, x: rb.neg(x))
    assert isinstance(y.owner, CustomFnOp) and len(y.owner.results) == 1


def test_custom_fn_derivative_bodies_are_not_executed():
    """The vjp body solves a singular system (an interpreter error if run); the jvp body likewise."""

    def singular(rb, *args):
        zeros = rb.constant(np.zeros((4, 4), np.float32))
        return rb.dense_solve(zeros, args[0])

    def build(b, x):
        return b.custom_fn([x], lambda rb, x: rb.sin(x), vjp=singular, jvp=singular)

    x = rand(4)
    (y,) = run(module_of(build, ([4], "f32")), x)
    np.testing.assert_allclose(y, np.sin(x), rtol=1e-6)


def test_custom_fn_regions_state_their_signatures():
    def build(b, x, n):
        vjp = lambda rb, x, n, y, dy: (dy, n)
        jvp = lambda rb, x, n, y, tx, tn: tx
        return b.custom_fn([x, n], lambda rb, x, n: rb.cos(x), vjp, jvp)

    module = module_of(build, ([4], "f32"), ([2], "i32"))
    op = the_op(module, CustomFnOp)
    f32x4, i32x2 = op.inputs[0].type, op.inputs[1].type
    assert list(op.region_arg_types(op.forward)) == [f32x4, i32x2]
    assert list(op.region_arg_types(op.vjp)) == [f32x4, i32x2, f32x4, f32x4]
    assert list(op.region_arg_types(op.jvp)) == [f32x4, i32x2, f32x4, f32x4, i32x2]


# Region signatures under rlx-specialize, purity -----------------------------------------------


def test_specialize_retypes_scan_and_custom_fn_regions():
    def build(b, h, xs):
        y = b.scan_with_xs(h, [xs], lambda rb, c, x: rb.add(c, x), 5)
        return b.custom_fn([y], lambda rb, v: rb.neg(v), vjp=lambda rb, v, y, dy: rb.neg(dy))

    module = module_of(build, ([DYNAMIC, 3], "f32"), ([5, DYNAMIC, 3], "f32"))
    SpecializeShapesPass(shapes=("a0=2x3", "a1=5x2x3")).apply(Context(), module)
    module.verify()
    scan, fn = the_op(module, ScanOp), the_op(module, CustomFnOp)
    assert [str(t) for t in scan.body.block.arg_types] == ["tensor<2x3xf32>"] * 2
    assert [str(t) for t in fn.vjp.block.arg_types] == ["tensor<2x3xf32>"] * 3
    assert str(fn.outputs[0].type) == "tensor<2x3xf32>"
    h, xs = rand(2, 3), rand(5, 2, 3)
    np.testing.assert_allclose(run(module, h, xs)[0], -(h + xs.sum(axis=0)), rtol=1e-5)


def test_scan_backward_states_its_region_signatures():
    op = the_op(backward_module(7, False, 3), ScanBackwardOp)
    assert isinstance(op, RegionSignatureInterface)
    carry, x_t = op.init[0].type, op.xs[0].type
    step = str(x_t).replace("7x", "")
    assert [str(t) for t in op.region_arg_types(op.vjp)] == [str(carry)] * 2 + [step] + [str(carry)] * 2
    assert [str(t) for t in op.region_arg_types(op.forward)] == [str(carry)] * 2 + [step]


def test_dce_removes_an_unused_scan():
    def build(b, h):
        b.scan(h, lambda rb, c: rb.exp(c), 3)
        return h

    module = module_of(build, ([2], "f32"))
    DeadCodeElimination().apply(Context(), module)
    assert not [op for op in module.walk() if isinstance(op, ScanOp)]


# mir.selective_scan ------------------------------------------------------------------------


def reference_selective_scan(x, delta, a, b, c):
    """Scalar loops over the recurrence in float64, one channel and state entry at a time."""
    x, delta, a, b, c = (np.asarray(v, np.float64) for v in (x, delta, a, b, c))
    batch, seq, hidden = x.shape
    size = a.shape[1]
    y = np.zeros((batch, seq, hidden))
    for i in range(batch):
        for ch in range(hidden):
            h = [0.0] * size
            for t in range(seq):
                dt = delta[i, t, ch]
                for n in range(size):
                    h[n] = math.exp(dt * a[ch, n]) * h[n] + dt * b[i, t, n] * x[i, t, ch]
                y[i, t, ch] = sum(c[i, t, n] * h[n] for n in range(size))
    return y


def ssm_inputs(batch, seq, hidden, size, dtype=np.float32):
    return (
        rand(batch, seq, hidden, dtype=dtype),
        np.abs(rand(batch, seq, hidden, dtype=np.float64, scale=0.5)).astype(dtype),
        -np.abs(rand(hidden, size, dtype=np.float64)).astype(dtype),
        rand(batch, seq, size, dtype=dtype),
        rand(batch, seq, size, dtype=dtype),
    )


@pytest.mark.parametrize(("dims", "dtype", "tol"), [
    ((2, 5, 3, 4), np.float32, 1e-5), ((1, 1, 1, 1), np.float32, 1e-6), ((3, 7, 2, 5), np.float64, 1e-12),
    ((2, 4, 3, 2), ml_dtypes.bfloat16, 2e-2),
])  # fmt: skip
def test_selective_scan_matches_a_scalar_loop(dims, dtype, tol):
    inputs = ssm_inputs(*dims, dtype=dtype)
    name = {np.float32: "f32", np.float64: "f64", ml_dtypes.bfloat16: "bf16"}[dtype]
    shapes = [list(v.shape) for v in inputs]
    module = module_of(lambda b, *args: b.selective_scan(*args), *[(s, name) for s in shapes])
    (y,) = run(module, *inputs)
    assert y.dtype == np.dtype(dtype)
    np.testing.assert_allclose(y.astype(np.float64), reference_selective_scan(*inputs), rtol=tol, atol=tol)


def test_selective_scan_infers_state_size_from_a():
    y = build_op("selective_scan", [[2, 5, 3], [2, 5, 3], [3, 6], [2, 5, 6], [2, 5, 6]])
    assert y.owner.state_size.value.data == 6 and str(y.type) == "tensor<2x5x3xf32>"


# mir.gated_delta_net -----------------------------------------------------------------------


def reference_gated_delta_net(q, k, v, g, beta, state=None):
    """The per-head recurrence written with scalar loops in float64 (llama.cpp's autoregressive form)."""
    q, k, v, g, beta = (np.asarray(t, np.float64) for t in (q, k, v, g, beta))
    batch, seq, heads, size = q.shape
    out = np.zeros(q.shape)
    final = np.zeros((batch, heads, size, size))
    for i in range(batch):
        for h in range(heads):
            m = np.zeros((size, size)) if state is None else np.array(state[i, h], np.float64)
            for t in range(seq):
                m = m * math.exp(g[i, t, h])
                for j in range(size):
                    predicted = sum(m[r, j] * k[i, t, h, r] for r in range(size))
                    delta = (v[i, t, h, j] - predicted) * beta[i, t, h]
                    for r in range(size):
                        m[r, j] += k[i, t, h, r] * delta
                for j in range(size):
                    out[i, t, h, j] = sum(m[r, j] * q[i, t, h, r] for r in range(size)) / math.sqrt(size)
            final[i, h] = m
    return out, final


def gdn_inputs(batch, seq, heads, size, dtype=np.float32):
    def unit_rows(*shape):
        x = rand(*shape, dtype=np.float64)
        return (x / np.linalg.norm(x, axis=-1, keepdims=True)).astype(dtype)

    q, k = unit_rows(batch, seq, heads, size), unit_rows(batch, seq, heads, size)
    v = rand(batch, seq, heads, size, dtype=dtype)
    g = (-np.abs(rand(batch, seq, heads, dtype=np.float64, scale=0.3))).astype(dtype)
    beta = (1 / (1 + np.exp(-rand(batch, seq, heads, dtype=np.float64)))).astype(dtype)
    return q, k, v, g, beta


def gdn_module(shapes, dtype, with_state):
    def build(b, *args):
        return b.gated_delta_net(*args)

    specs = [(s, dtype) for s in shapes]
    return module_of(build, *specs) if with_state else module_of(build, *specs[:5])


@pytest.mark.parametrize(("dims", "dtype", "tol"), [
    ((1, 4, 2, 3), np.float32, 1e-5), ((2, 6, 3, 4), np.float64, 1e-12), ((2, 3, 2, 4), ml_dtypes.bfloat16, 3e-2),
])  # fmt: skip
@pytest.mark.parametrize("with_state", [False, True])
def test_gated_delta_net_matches_a_scalar_loop(dims, dtype, tol, with_state):
    batch, _, heads, size = dims
    inputs = gdn_inputs(*dims, dtype=dtype)
    state = rand(batch, heads, size, size, dtype=dtype, scale=0.5) if with_state else None
    name = {np.float32: "f32", np.float64: "f64", ml_dtypes.bfloat16: "bf16"}[dtype]
    shapes = [list(v.shape) for v in inputs] + [[batch, heads, size, size]]
    outputs = run(gdn_module(shapes, name, with_state), *inputs, *([state] if with_state else []))
    out, final = reference_gated_delta_net(*inputs, state)
    np.testing.assert_allclose(outputs[0].astype(np.float64), out, rtol=tol, atol=tol)
    if with_state:
        assert outputs[1].dtype == np.dtype(dtype)
        np.testing.assert_allclose(outputs[1].astype(np.float64), final, rtol=tol, atol=tol)
    else:
        assert len(outputs) == 1


def test_gated_delta_net_state_threads_a_sequence_split_in_two():
    """Decode-mode use: running two halves, the second from the first's final state, equals one run."""
    q, k, v, g, beta = gdn_inputs(2, 6, 2, 3)
    zero = np.zeros((2, 2, 3, 3), np.float32)
    shapes = [list(x.shape) for x in (q[:, :3], k[:, :3], v[:, :3], g[:, :3], beta[:, :3])] + [list(zero.shape)]
    half = gdn_module(shapes, "f32", with_state=True)
    first, state = run(half, q[:, :3], k[:, :3], v[:, :3], g[:, :3], beta[:, :3], zero)
    second, final = run(half, q[:, 3:], k[:, 3:], v[:, 3:], g[:, 3:], beta[:, 3:], state)
    whole, whole_final = run(gdn_module([list(x.shape) for x in (q, k, v, g, beta)] + [list(zero.shape)],
                                        "f32", with_state=True), q, k, v, g, beta, zero)  # fmt: skip
    np.testing.assert_allclose(np.concatenate([first, second], axis=1), whole, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(final, whole_final, rtol=1e-6, atol=1e-6)


def test_gated_delta_net_result_count_follows_the_state():
    plain = build_op("gated_delta_net", [[1, 2, 3, 4]] * 3 + [[1, 2, 3]] * 2)
    carried = build_op("gated_delta_net", [[1, 2, 3, 4]] * 3 + [[1, 2, 3]] * 2 + [[1, 3, 4, 4]])
    assert not isinstance(plain, tuple) and plain.owner.state_size.value.data == 4
    assert isinstance(carried, tuple) and [str(v.type) for v in carried] == [
        "tensor<1x2x3x4xf32>", "tensor<1x3x4x4xf32>"]  # fmt: skip
    assert isinstance(carried[0].owner, GatedDeltaNetOp)


# Verifier messages of the negative lit tests -------------------------------------------------


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
