"""Backward kernels against central differences of their forward ops (float64, eps 1e-6, rtol 1e-5).

Each test runs the forward MIR op through the interpreter at perturbed inputs
(`testing.gradcheck`) and compares the backward kernel's output with the
numerical vector-Jacobian product, on shapes with broadcasting and the edge
cases the issue names: ties in max pooling, fully masked attention rows,
grouped convolutions and grouped KV heads.
"""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.traits import (
    Precision,
    data_operands,
    is_elementwise,
    precision_class,
    view_source,
)
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.gradcheck import (
    check_directional,
    check_vjp,
    mir_function,
    numerical_vjp,
)
from rlx_xdsl.testing.oracles import run_op

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-backward.mlir"
RNG = np.random.default_rng(2024)


def rand(*shape, low=None, high=None):
    if low is not None:
        return RNG.uniform(low, high, shape)
    return RNG.standard_normal(shape)


def unbroadcast(grad: np.ndarray, shape) -> np.ndarray:
    """Sum a gradient over the dims its operand was broadcast along (autodiff's unbroadcast)."""
    lead = grad.ndim - len(shape)
    grad = grad.sum(axis=tuple(range(lead)))
    return grad.sum(axis=tuple(i for i, d in enumerate(shape) if d == 1), keepdims=True)


# Activations ---------------------------------------------------------------------------

DOMAIN = {
    Activation.LOG: (0.3, 2.0),
    Activation.SQRT: (0.3, 2.0),
    Activation.RSQRT: (0.3, 2.0),
    Activation.TAN: (-1.2, 1.2),
    Activation.LOG1P: (-0.7, 2.0),
}
DIFFERENTIABLE = [kind for kind in Activation if kind != Activation.ROUND]


@pytest.mark.parametrize("kind", DIFFERENTIABLE, ids=str)
def test_activation_backward_is_the_derivative(kind):
    low, high = DOMAIN.get(kind, (-2.5, 2.5))
    x = rand(3, 4, low=low, high=high)
    dy = rand(3, 4)
    grad = run_op("activation_backward", [x, dy], kind=kind)
    check_vjp(grad, mir_function(str(kind), [x]), [x], 0, dy)


def test_tan_and_exact_gelu_use_their_own_derivatives():
    """RLX's lowering differentiates tan as tanh and exact gelu as its tanh approximation."""
    x = np.array([0.9, -1.1, 1.3])
    dy = np.ones(3)
    tan = run_op("activation_backward", [x, dy], kind="tan")
    np.testing.assert_allclose(tan, 1 / np.cos(x) ** 2, rtol=1e-12)
    assert not np.allclose(tan, 1 - np.tanh(x) ** 2, rtol=1e-2)
    exact = run_op("activation_backward", [x, dy], kind="gelu")
    approx = run_op("activation_backward", [x, dy], kind="gelu_approx")
    assert np.max(np.abs(exact - approx)) > 1e-4


def test_relu_backward_is_the_derivative_and_zero_at_zero():
    x = np.concatenate([rand(11), [0.0]])
    dy = rand(12)
    grad = run_op("relu_backward", [x, dy])
    check_vjp(grad[:11], mir_function("relu", [x[:11]]), [x[:11]], 0, dy[:11])
    assert grad[11] == 0.0
    np.testing.assert_array_equal(grad, run_op("activation_backward", [x, dy], kind="relu"))


def test_round_passes_the_gradient_straight_through():
    """RLX's straight-through estimator, though the true derivative is 0 off the half-integers."""
    x, dy = rand(6), rand(6)
    np.testing.assert_array_equal(run_op("activation_backward", [x, dy], kind="round"), dy)
    np.testing.assert_allclose(numerical_vjp(mir_function("round", [x]), [x], 0, dy), 0.0, atol=1e-12)


@pytest.mark.parametrize("kind", ["sqrt", "rsqrt"])
def test_sqrt_gradients_are_zero_off_the_positive_axis(kind):
    x = np.array([-1.0, 0.0, 4.0])
    grad = run_op("activation_backward", [x, np.ones(3)], kind=kind)
    assert grad[0] == 0.0 and grad[1] == 0.0 and grad[2] != 0.0


@pytest.mark.parametrize(
    ("dtype", "rtol"), [(np.float32, 1e-6), (np.float16, 2e-3), (ml_dtypes.bfloat16, 2e-2)]
)
def test_activation_backward_keeps_the_dtype(dtype, rtol):
    x, dy = rand(8).astype(dtype), rand(8).astype(dtype)
    out = run_op("activation_backward", [x, dy], kind="silu")
    assert out.dtype == np.dtype(dtype)
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    expected = dy.astype(np.float64) * s * (1 + x.astype(np.float64) * (1 - s))
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=rtol, atol=rtol)


# Normalisations ----------------------------------------------------------------------------


AXIS_NORM_CASES = [
    ((2, 3, 4), -1, (4,)),
    ((2, 3, 4), 1, (3, 4)),
    ((2, 3, 4), 1, (1, 4)),  # gamma broadcast along the normalised dims
    ((5, 4), 0, (5, 1)),
    ((6,), 0, (6,)),
]


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize(("shape", "axis", "gamma_shape"), AXIS_NORM_CASES)
def test_axis_norm_gradients(norm, shape, axis, gamma_shape):
    x, dy = rand(*shape), rand(*shape)
    gamma, beta = rand(*gamma_shape), rand(*gamma_shape)
    eps = 1e-5
    forward = mir_function(norm, [x, gamma, beta], axis=axis, eps=eps)
    args = [x, gamma, beta]
    dx = run_op(f"{norm}_backward_input", [x, gamma, dy], axis=axis, eps=eps)
    check_vjp(dx, forward, args, 0, dy)
    dgamma = run_op(f"{norm}_backward_gamma", [x, dy], axis=axis, eps=eps)
    assert dgamma.shape == shape[axis % len(shape) :]
    check_vjp(unbroadcast(dgamma, gamma_shape), forward, args, 1, dy)
    if norm == "rms_norm":
        dbeta = run_op("rms_norm_backward_beta", [dy], axis=axis)
        check_vjp(unbroadcast(dbeta, gamma_shape), forward, args, 2, dy)


@pytest.mark.parametrize(
    ("shape", "groups"), [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((1, 3, 5), 1), ((2, 4, 2), 4)]
)
def test_group_norm_gradients(shape, groups):
    x, dy = rand(*shape), rand(*shape)
    gamma, beta = rand(shape[1]), rand(shape[1])
    forward = mir_function("group_norm", [x, gamma, beta], num_groups=groups, eps=1e-5)
    args = [x, gamma, beta]
    check_vjp(
        run_op("group_norm_backward_input", [x, gamma, dy], num_groups=groups, eps=1e-5), forward, args, 0, dy
    )
    check_vjp(run_op("group_norm_backward_gamma", [x, dy], num_groups=groups, eps=1e-5), forward, args, 1, dy)
    check_vjp(run_op("group_norm_backward_beta", [dy]), forward, args, 2, dy)


def test_norm_gradients_accumulate_half_precision_in_f32():
    x = rand(4, 64).astype(np.float16)
    dy = rand(4, 64).astype(np.float16)
    gamma = rand(64).astype(np.float16)
    out = run_op("layer_norm_backward_input", [x, gamma, dy], axis=-1, eps=1e-5)
    exact = run_op(
        "layer_norm_backward_input",
        [x.astype(np.float64), gamma.astype(np.float64), dy.astype(np.float64)],
        axis=-1,
        eps=1e-5,
    )
    assert out.dtype == np.float16
    np.testing.assert_allclose(out.astype(np.float64), exact, rtol=2e-2, atol=2e-2)


# Rope and attention ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "n_rot", "table"),
    [((2, 3, 4), 4, (3, 2)), ((1, 2, 3, 6), 4, (3, 2)), ((2, 5, 2), 2, (2, 5, 1))],
)
def test_rope_backward_is_the_inverse_rotation(shape, n_rot, table):
    x, dy = rand(*shape), rand(*shape)
    angles = rand(*table)
    cos, sin = np.cos(angles), np.sin(angles)
    props = {"head_dim": shape[-1], "n_rot": n_rot}
    grad = run_op("rope_backward", [dy, cos, sin], **props)
    check_vjp(grad, mir_function("rope", [x, cos, sin], **props), [x, cos, sin], 0, dy)


ATTENTION_CASES = {
    "plain": dict(mask_kind="none"),
    "causal": dict(mask_kind="causal"),
    "causal_more_queries_than_keys": dict(mask_kind="causal", sq=5, sk=3),  # first rows fully masked
    "sliding_window": dict(mask_kind="sliding_window", window=2),
    "custom_with_empty_row": dict(mask_kind="custom"),
    "bias": dict(mask_kind="bias"),
    "scale_and_softcap": dict(mask_kind="causal", score_scale=0.7, attn_logit_softcap=1.5),
    "gqa_softcap": dict(mask_kind="none", kv_heads=1, attn_logit_softcap=2.0),
}


def attention_case(mask_kind, sq=3, sk=4, kv_heads=2, heads=4, dim=2, batch=2, **props):
    q = rand(batch, heads, sq, dim)
    k, v = rand(batch, kv_heads, sk, dim), rand(batch, kv_heads, sk, dim)
    mask = None
    if mask_kind == "custom":
        mask = (RNG.random((batch, sk)) < 0.6).astype(np.float64)
        mask[0] = 0.0  # every key of batch 0 dropped: its rows produce and receive nothing
        mask[1, 0] = 1.0
    elif mask_kind == "bias":
        mask = rand(sq, sk)
        mask[0, 1] = -np.inf
    props = {"num_heads": heads, "head_dim": dim, "mask_kind": mask_kind, **props}
    return [q, k, v], mask, props


@pytest.mark.parametrize("wrt", ["query", "key", "value"])
@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_attention_backward(case, wrt):
    (q, k, v), mask, props = attention_case(**ATTENTION_CASES[case])
    forward = mir_function("attention", [q, k, v, mask], **props)
    out = forward(q, k, v, mask)
    dy = rand(*out.shape)
    grad = run_op(
        "attention_backward", [q, k, v, dy] + ([mask] if mask is not None else []), wrt=wrt, **props
    )
    index = ["query", "key", "value"].index(wrt)
    assert grad.shape == [q, k, v][index].shape
    check_vjp(grad, forward, [q, k, v, mask], index, dy)


def test_fully_masked_rows_have_zero_gradients():
    (q, k, v), mask, props = attention_case(**ATTENTION_CASES["custom_with_empty_row"])
    dy = rand(*q.shape)
    for wrt, value in (("query", q), ("key", k), ("value", v)):
        grad = run_op("attention_backward", [q, k, v, dy, mask], wrt=wrt, **props)
        assert grad.shape == value.shape
        np.testing.assert_array_equal(grad[0], 0.0)  # batch 0 has no key left


# Convolution and pooling ------------------------------------------------------------------------

CONV_CASES = {
    "plain": dict(x=(1, 2, 5, 5), cout=3, k=(3, 3)),
    "stride_padding": dict(x=(2, 2, 6, 5), cout=2, k=(3, 2), stride=(2, 2), padding=(1, 1)),
    "stride_remainder": dict(x=(1, 1, 7, 6), cout=2, k=(2, 3), stride=(3, 2)),  # rows the forward skips
    "dilation": dict(x=(1, 2, 6, 6), cout=2, k=(2, 2), dilation=(2, 3), padding=(1, 0)),
    "groups": dict(x=(2, 4, 4, 4), cout=6, k=(3, 3), groups=2, padding=(1, 1)),
    "depthwise": dict(x=(1, 3, 5, 4), cout=3, k=(2, 2), groups=3, stride=(2, 1)),
    "padding_beyond_kernel": dict(x=(1, 1, 3, 3), cout=1, k=(2, 2), padding=(2, 2)),
    "one_d": dict(x=(2, 3, 1, 9), cout=2, k=(1, 3), stride=(1, 2), padding=(0, 1), dilation=(1, 2)),
}


def conv_case(x, cout, k, stride=(1, 1), padding=(0, 0), dilation=(1, 1), groups=1):
    xv = rand(*x)
    w = rand(cout, x[1] // groups, *k)
    props = dict(
        kernel_size=list(k),
        stride=list(stride),
        padding=list(padding),
        dilation=list(dilation),
        groups=groups,
    )
    return xv, w, props


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_backward(case):
    x, w, props = conv_case(**CONV_CASES[case])
    forward = mir_function("conv", [x, w], **props)
    dy = rand(*forward(x, w).shape)
    dx = run_op("conv_backward_input", [dy, w], input_size=list(x.shape[2:]), **props)
    check_vjp(dx, forward, [x, w], 0, dy)
    dw = run_op("conv_backward_weight", [x, dy], **props)
    check_vjp(dw, forward, [x, w], 1, dy)


POOL_CASES = {
    "max": dict(kind="max", kernel_size=[2, 2]),
    "max_overlapping_padded": dict(kind="max", kernel_size=[3, 2], stride=[1, 1], padding=[1, 1]),
    "mean": dict(kind="mean", kernel_size=[2, 3], stride=[2, 1]),
    "mean_padded": dict(kind="mean", kernel_size=[3, 3], stride=[2, 2], padding=[1, 1]),
}


@pytest.mark.parametrize("case", sorted(POOL_CASES))
def test_pool_backward(case):
    props = POOL_CASES[case]
    x = RNG.permutation(2 * 2 * 5 * 5).reshape(2, 2, 5, 5) / 7.0  # distinct values: no ties
    forward = mir_function("pool", [x], **props)
    dy = rand(*forward(x).shape)
    check_vjp(run_op("pool_backward", [x, dy], **props), forward, [x], 0, dy)


def test_max_pool_ties_route_to_the_first_maximum():
    """Each window's gradient goes whole to its first tied maximum; moving the tied cells
    together (the directions along which max is differentiable) confirms the total."""
    base = rand(1, 2, 2, 3)
    x = np.repeat(np.repeat(base, 2, axis=2), 2, axis=3)  # every 2x2 window holds four equal cells
    props = dict(kind="max", kernel_size=[2, 2])
    forward = mir_function("pool", [x], **props)
    dy = rand(1, 2, 2, 3)
    grad = run_op("pool_backward", [x, dy], **props)
    np.testing.assert_array_equal(grad[..., ::2, ::2], dy)  # the first cell of each window
    assert np.count_nonzero(grad) == dy.size
    directions = [np.repeat(np.repeat(rand(1, 2, 2, 3), 2, axis=2), 2, axis=3) for _ in range(4)]
    check_directional(grad, forward, [x], 0, dy, directions)


# Scans and indexing ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axis", "exclusive"),
    [((5,), 0, False), ((3, 4), 1, True), ((2, 3, 4), -3, False), ((2, 3), 0, True)],
)
def test_cumsum_backward(shape, axis, exclusive):
    x, dy = rand(*shape), rand(*shape)
    grad = run_op("cumsum_backward", [dy], axis=axis, exclusive=exclusive)
    check_vjp(grad, mir_function("cumsum", [x], axis=axis, exclusive=exclusive), [x], 0, dy)


@pytest.mark.parametrize(
    ("table", "indices", "axis"),
    [
        ((5, 3), np.array([4, 0, 4, 2]), 0),  # repeated rows add up
        ((3, 6, 2), np.array([[1, 5], [1, 1]]), 1),
        ((3, 6, 2), np.array([[-1, 5], [1, -5]]), 1),  # -1 is row 5, as in the gather
        ((4,), np.array([3, 3, 0]), 0),
        ((2, 4), np.array(2), -1),  # a scalar index drops the axis
    ],
)
def test_gather_backward(table, indices, axis):
    t = rand(*table)
    forward = mir_function("gather", [t, indices], axis=axis)
    dy = rand(*forward(t, indices).shape)
    grad = run_op("gather_backward", [dy, indices], axis=axis, dim_size=table[axis])
    check_vjp(grad, forward, [t, indices], 0, dy)


def test_gather_backward_accepts_float_encoded_indices():
    dy = rand(3, 2)
    ids = np.array([1.9, 0.0, 1.2], np.float32)  # truncated toward zero: rows 1, 0, 1
    grad = run_op("gather_backward", [dy, ids], axis=0, dim_size=3)
    np.testing.assert_allclose(grad, [dy[1], dy[0] + dy[2], np.zeros(2)])


@pytest.mark.parametrize("bad", [3, -4])
def test_gather_backward_rejects_out_of_range_indices(bad):
    with pytest.raises(KernelError, match=rf"'mir.gather_backward' index {bad} is out of range \[-3, 3\)"):
        run_op("gather_backward", [rand(2, 2), np.array([0, bad])], axis=0, dim_size=3)


def test_stop_gradient_is_the_identity():
    x = rand(3, 2)
    np.testing.assert_array_equal(run_op("stop_gradient", [x]), x)


# Random configurations ----------------------------------------------------------------------
# Each seed draws shapes and attributes afresh (broadcast gammas and cos/sin tables, strides,
# dilations and groups, GQA and every mask kind), and checks every gradient of the family.

SEEDS = range(6)


def _dims(rng, rank, low=1, high=4):
    return tuple(int(d) for d in rng.integers(low, high + 1, rank))


@pytest.mark.parametrize("seed", SEEDS)
def test_random_norm_gradients(seed):
    rng = np.random.default_rng(seed)
    shape = _dims(rng, int(rng.integers(1, 5)))
    axis = int(rng.integers(-len(shape), len(shape)))
    region = shape[axis % len(shape) :]
    gamma_shape = tuple(1 if rng.random() < 0.3 else d for d in region)[int(rng.integers(0, len(region))) :]
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    gamma, beta = rng.standard_normal(gamma_shape), rng.standard_normal(gamma_shape)
    for norm in ("layer_norm", "rms_norm"):
        forward = mir_function(norm, [x, gamma, beta], axis=axis, eps=1e-5)
        dx = run_op(f"{norm}_backward_input", [x, gamma, dy], axis=axis, eps=1e-5)
        check_vjp(dx, forward, [x, gamma, beta], 0, dy)
        dgamma = run_op(f"{norm}_backward_gamma", [x, dy], axis=axis, eps=1e-5)
        check_vjp(unbroadcast(dgamma, gamma_shape), forward, [x, gamma, beta], 1, dy)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_conv_gradients(seed):
    rng = np.random.default_rng(seed)
    groups = int(rng.integers(1, 4))
    cin, cout = groups * int(rng.integers(1, 3)), groups * int(rng.integers(1, 3))
    kernel, stride, dilation = _dims(rng, 2, 1, 3), _dims(rng, 2, 1, 3), _dims(rng, 2, 1, 2)
    padding = _dims(rng, 2, 0, 2)
    size = tuple(
        max(int(rng.integers(1, 7)), d * (k - 1) + 1 - 2 * p) for k, d, p in zip(kernel, dilation, padding)
    )
    x = rng.standard_normal((int(rng.integers(1, 3)), cin, *size))
    w = rng.standard_normal((cout, cin // groups, *kernel))
    props = dict(
        kernel_size=list(kernel),
        stride=list(stride),
        padding=list(padding),
        dilation=list(dilation),
        groups=groups,
    )
    forward = mir_function("conv", [x, w], **props)
    dy = rng.standard_normal(forward(x, w).shape)
    check_vjp(run_op("conv_backward_input", [dy, w], input_size=list(size), **props), forward, [x, w], 0, dy)
    check_vjp(run_op("conv_backward_weight", [x, dy], **props), forward, [x, w], 1, dy)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_attention_gradients(seed):
    rng = np.random.default_rng(seed)
    kv_heads, repeats = int(rng.integers(1, 3)), int(rng.integers(1, 3))
    batch, sq, sk, dim = (
        int(rng.integers(1, 3)),
        int(rng.integers(1, 5)),
        int(rng.integers(1, 5)),
        int(rng.integers(1, 4)),
    )
    heads = kv_heads * repeats
    kind = ["none", "causal", "sliding_window", "custom", "bias"][seed % 5]
    props = {"num_heads": heads, "head_dim": dim, "mask_kind": kind}
    if kind == "sliding_window":
        props["window"] = int(rng.integers(1, 4))
    if rng.random() < 0.5:
        props["score_scale"] = float(rng.uniform(0.3, 1.5))
    if rng.random() < 0.5:
        props["attn_logit_softcap"] = float(rng.uniform(1.0, 4.0))
    mask = None
    if kind == "custom":
        mask = (rng.random((batch, sk)) < 0.6).astype(np.float64)
    elif kind == "bias":
        mask = rng.standard_normal((1, heads, sq, sk))
    q, dy = rng.standard_normal((batch, heads, sq, dim)), rng.standard_normal((batch, heads, sq, dim))
    k, v = rng.standard_normal((batch, kv_heads, sk, dim)), rng.standard_normal((batch, kv_heads, sk, dim))
    forward = mir_function("attention", [q, k, v, mask], **props)
    extra = [mask] if mask is not None else []
    for index, wrt in enumerate(("query", "key", "value")):
        grad = run_op("attention_backward", [q, k, v, dy, *extra], wrt=wrt, **props)
        check_vjp(grad, forward, [q, k, v, mask], index, dy)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_pool_rope_gather_cumsum_gradients(seed):
    rng = np.random.default_rng(seed)
    # pooling (distinct values: no ties)
    kernel = _dims(rng, 2, 1, 3)
    padding = tuple(int(rng.integers(0, k)) for k in kernel)
    size = tuple(max(int(rng.integers(1, 6)), k - 2 * p) for k, p in zip(kernel, padding))
    x = rng.permutation(2 * 2 * size[0] * size[1]).reshape(2, 2, *size) / 5.0
    props = dict(
        kind=["max", "mean"][seed % 2],
        kernel_size=list(kernel),
        stride=list(_dims(rng, 2, 1, 3)),
        padding=list(padding),
    )
    forward = mir_function("pool", [x], **props)
    dy = rng.standard_normal(forward(x).shape)
    check_vjp(run_op("pool_backward", [x, dy], **props), forward, [x], 0, dy)
    # rope, with a cos/sin table broadcast over the leading dims
    head_dim = 2 * int(rng.integers(1, 4))
    n_rot = 2 * int(rng.integers(1, head_dim // 2 + 1))
    shape = (*_dims(rng, int(rng.integers(1, 3))), head_dim)
    table = (shape[-2], n_rot // 2)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    cos, sin = rng.standard_normal(table), rng.standard_normal(table)
    rope = {"head_dim": head_dim, "n_rot": n_rot}
    grad = run_op("rope_backward", [dy, cos, sin], **rope)
    check_vjp(grad, mir_function("rope", [x, cos, sin], **rope), [x, cos, sin], 0, dy)
    # gather
    table_shape = _dims(rng, int(rng.integers(1, 4)))
    axis = int(rng.integers(0, len(table_shape)))
    ids = rng.integers(0, table_shape[axis], _dims(rng, int(rng.integers(0, 3))))
    t = rng.standard_normal(table_shape)
    forward = mir_function("gather", [t, ids], axis=axis)
    dy = rng.standard_normal(forward(t, ids).shape)
    grad = run_op("gather_backward", [dy, ids], axis=axis, dim_size=table_shape[axis])
    check_vjp(grad, forward, [t, ids], 0, dy)
    # cumsum
    shape = _dims(rng, int(rng.integers(1, 4)))
    axis, exclusive = int(rng.integers(-len(shape), len(shape))), bool(seed % 2)
    x, dy = rng.standard_normal(shape), rng.standard_normal(shape)
    grad = run_op("cumsum_backward", [dy], axis=axis, exclusive=exclusive)
    check_vjp(grad, mir_function("cumsum", [x], axis=axis, exclusive=exclusive), [x], 0, dy)


# Types, traits and the verifier ----------------------------------------------------------------


def test_result_types_are_inferred_with_dynamic_dims():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 3, 4])
    dy = b.input("dy", [2, 3, 4])
    assert str(b.relu_backward(x, dy).type) == "tensor<2x3x4xf32>"
    assert str(b.layer_norm_backward_gamma(x, dy, axis=1).type) == "tensor<3x4xf32>"
    assert str(b.group_norm_backward_beta(dy).type) == "tensor<3xf32>"
    q = b.input("q", [DYNAMIC, 4, 3, 2])
    kv = b.input("k", [2, 2, 5, 2])
    dq = b.input("dq", [DYNAMIC, 4, 3, 2])
    assert (
        str(b.attention_backward(q, kv, kv, dq, wrt="key", num_heads=4, head_dim=2).type)
        == "tensor<2x2x5x2xf32>"
    )
    dconv = b.input("dconv", [DYNAMIC, 6, 3, 3])
    w = b.input("w", [6, 2, 3, 3])
    out = b.conv_backward_input(dconv, w, input_size=[5, 5], kernel_size=[3, 3], groups=2)
    assert str(out.type) == "tensor<?x4x5x5xf32>"
    ids = b.input("ids", [2, 3], "i64")
    rows = b.input("rows", [2, 3, 7])
    assert str(b.gather_backward(rows, ids, axis=0, dim_size=9).type) == "tensor<9x7xf32>"


EXPECTED_CLASS = {
    Precision.ELEMENTWISE: {"relu_backward", "activation_backward"},
    Precision.REDUCTION: {"layer_norm_backward_input", "layer_norm_backward_gamma"},
    Precision.DATA_MOVEMENT: {"pool_backward", "stop_gradient"},
    Precision.COMPUTE: {
        "rms_norm_backward_input", "rms_norm_backward_gamma", "rms_norm_backward_beta",
        "group_norm_backward_input", "group_norm_backward_gamma", "group_norm_backward_beta",
        "rope_backward", "attention_backward", "conv_backward_input", "conv_backward_weight",
        "cumsum_backward", "gather_backward",
    },
}  # fmt: skip


@pytest.mark.parametrize("op", bw.OPS, ids=lambda op: op.name)
def test_precision_class_follows_rlx(op):
    """RLX's `precision::op_kind`: norms' and rope's gradients fall to its Compute fallback."""
    name = op.name.removeprefix("mir.")
    assert op.has_trait(Pure)
    assert precision_class(op) is next(c for c, names in EXPECTED_CLASS.items() if name in names)
    assert is_elementwise(op) == (name in {"relu_backward", "activation_backward"})


def test_roles_and_views():
    b = GraphBuilder("f")
    dy, ids = b.input("dy", [3, 2]), b.input("ids", [3], "i64")
    gather = b.gather_backward(dy, ids, axis=0, dim_size=4).owner
    assert data_operands(gather) == [0]
    stop = b.stop_gradient(dy).owner
    assert view_source(stop) is dy


def test_builder_rejects_a_cotangent_of_the_wrong_shape():
    b = GraphBuilder("f")
    x, dy = b.input("x", [2, 3]), b.input("dy", [3, 2])
    with pytest.raises(
        VerifyException,
        match=r"'mir.relu_backward' dy shape \[3, 2\] differs from the forward result shape \[2, 3\]",
    ):
        b.relu_backward(x, dy)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
