"""`rlx-decompose-backward`: every kernel's decomposition computes what the kernel computes.

Each graph runs through the interpreter before (the kernels) and after the pass
(primitives only); float64 cases compare to 1e-10, random graphs (f32) to 1e-4.
"""

import mpmath  # the test extra: an independent oracle
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import dtypes, layers
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyBackwardOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS, DecomposeBackwardPass

RNG = np.random.default_rng(99)
KERNELS = [op for op in bw.OPS if op is not bw.StopGradientOp] + [SoftmaxCrossEntropyBackwardOp]


def decompose(module, keep=()):
    DecomposeBackwardPass(keep=keep).apply(make_context(), module)
    module.verify()
    return module


def kernels_in(module) -> list[str]:
    return [op.name for op in module.walk() if type(op) in KERNELS]


def one_op_graph(op_name, inputs, **props):
    """`@f(inputs) = mir.<op_name>(inputs)`; None marks an absent optional operand."""
    b = GraphBuilder("f")
    args = [
        None if x is None else b.input(f"in{i}", np.shape(x), dtypes.dtype_of_numpy(x.dtype).element_type)
        for i, x in enumerate(inputs)
    ]
    b.output(getattr(b.mir, op_name)(*args, **props))
    return b.module(), [x for x in inputs if x is not None]


def assert_decomposition_matches(op_name, inputs, rtol=1e-10, atol=1e-10, **props):
    module, arrays = one_op_graph(op_name, inputs, **props)
    (before,) = run_function(module, "f", arrays)
    decompose(module)
    assert kernels_in(module) == []
    (after,) = run_function(module, "f", arrays)
    assert after.dtype == before.dtype and after.shape == before.shape
    np.testing.assert_allclose(after, before, rtol=rtol, atol=atol)
    return module


def test_every_kernel_has_a_decomposition():
    layers.load("decompose-backward")
    assert DECOMPOSITIONS.missing(KERNELS) == []
    assert bw.StopGradientOp not in DECOMPOSITIONS  # an instruction to autodiff, kept


# Activations -------------------------------------------------------------------------

DOMAIN = {
    Activation.LOG: (0.3, 2.0),
    Activation.SQRT: (-1.0, 2.0),
    Activation.RSQRT: (-1.0, 2.0),
    Activation.TAN: (-1.2, 1.2),
    Activation.LOG1P: (-0.7, 2.0),
}


@pytest.mark.parametrize("kind", list(Activation), ids=str)
def test_activation_backward(kind):
    low, high = DOMAIN.get(kind, (-3.0, 3.0))
    x = RNG.uniform(low, high, (3, 5))
    x[0, 0] = 0.0 if kind not in (Activation.LOG,) else x[0, 0]  # the conventions at 0
    assert_decomposition_matches(
        "activation_backward", [x, RNG.standard_normal((3, 5))], kind=kind, rtol=1e-9
    )


def test_exact_gelu_derivative_near_zero_and_far_out():
    x = np.array([0.0, 1e-8, -1e-6, 1e-3, 6.0, -6.0, 30.0, -30.0])
    assert_decomposition_matches("activation_backward", [x, np.ones(8)], kind="gelu", rtol=1e-7, atol=1e-12)


@pytest.mark.parametrize("dtype, rtol", [(np.float32, 4e-7), (np.float64, 1e-14)])
def test_exact_gelu_derivative_keeps_the_tail_and_the_largest_values(dtype, rtol):
    """Against mpmath's `Phi(x) + x phi(x)`: Phi's digits below x = -6 and Phi = 0 or 1
    at the largest finite values (the derivative was 0.5 there when `2x` overflowed)."""
    mpmath.mp.prec = 100
    x = np.array([-7.0, -10.0, -20.0, -30.0, 2.5, -np.finfo(dtype).max, np.finfo(dtype).max], dtype)
    # past |x| = 40 the exact value rounds to 1 (x > 0) or -0 (mpmath overflows at 1e308)
    want = np.array([float(mpmath.ncdf(v) + v * mpmath.npdf(v)) if abs(v) < 40 else float(v > 0)
                     for v in map(mpmath.mpf, x.astype(float))])  # fmt: skip
    module, arrays = one_op_graph("activation_backward", [x, np.ones_like(x)], kind="gelu")
    (got,) = run_function(decompose(module), "f", arrays)
    np.testing.assert_allclose(got, want.astype(dtype), rtol=rtol, atol=0)


def _gelu_approx_derivative_oracle(v: float) -> float:
    """mpmath's derivative of `x sigmoid(2 sqrt(2/pi) (x + 0.044715 x^3))` (0 or 1 past |x| = 40)."""
    if abs(v) >= 40:
        return float(v > 0)
    with mpmath.workprec(120):
        return float(mpmath.diff(lambda t: t / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi) * (t + 0.044715 * t**3))), v))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_tanh_gelu_derivative_keeps_the_tail_in_every_implementation(dtype):
    """The interpreter's kernel, the decomposition (the IREE path) and the JAX formula's
    derivative (XLA) against mpmath: `(1 + tanh u) / 2` cancelled below x = -5 (30% off at
    -5, 0 at -10) and JAX's derivative of the quotient was NaN below x = -27."""
    jax = pytest.importorskip("jax")
    from rlx_xdsl.conversions.mir_to_jax.elementwise import ACTIVATIONS
    from rlx_xdsl.dialects.mir.attrs import Activation

    x = np.array([-5.0, -7.5, -10.0, -27.0, -40.0, -1.0, 0.0, 0.5, 3.0, -np.finfo(dtype).max, np.finfo(dtype).max], dtype)
    want = np.array([_gelu_approx_derivative_oracle(v) for v in x.astype(float)]).astype(dtype)
    module, arrays = one_op_graph("activation_backward", [x, np.ones_like(x)], kind="gelu_approx")
    (kernel,) = run_function(module, "f", arrays)
    (decomposed,) = run_function(decompose(module), "f", arrays)
    xla = np.asarray(jax.vmap(jax.grad(ACTIVATIONS[Activation.GELU_APPROX]))(x))
    # the tail's exp(-2u) magnifies one rounding of u by |2u| ulps: ~60 at x = -10 in f32
    for got, rtol in ((kernel, 1e-12), (xla, 1e-12), (decomposed, 1e-5)):
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=max(rtol, 8 * np.finfo(dtype).eps), atol=0)


def test_relu_backward():
    x = RNG.standard_normal((4, 3))
    x[1, 1] = 0.0
    assert_decomposition_matches("relu_backward", [x, RNG.standard_normal((4, 3))])


def test_a_static_dim_known_only_to_x_is_kept():
    b = GraphBuilder("f")
    x, dy = b.input("x", [2, 3]), b.input("dy", [DYNAMIC, 3])
    b.output(b.activation_backward(x, dy, kind="neg"), b.relu_backward(x, dy))
    module = b.module()
    types = list(module.ops.first.function_type.outputs)
    decompose(module)
    assert list(module.ops.first.function_type.outputs) == types


# Normalisations ------------------------------------------------------------------------


@pytest.mark.parametrize("norm", ["layer_norm", "rms_norm"])
@pytest.mark.parametrize(
    ("shape", "axis", "gamma"), [((2, 3, 4), -1, (4,)), ((2, 3, 4), 1, (1, 4)), ((6,), 0, (6,))]
)
def test_axis_norm_backward(norm, shape, axis, gamma):
    x, dy, g = RNG.standard_normal(shape), RNG.standard_normal(shape), RNG.standard_normal(gamma)
    assert_decomposition_matches(f"{norm}_backward_input", [x, g, dy], axis=axis, eps=1e-5)
    assert_decomposition_matches(f"{norm}_backward_gamma", [x, dy], axis=axis, eps=1e-5)
    if norm == "rms_norm":
        assert_decomposition_matches("rms_norm_backward_beta", [dy], axis=axis)


@pytest.mark.parametrize(("shape", "groups"), [((2, 4, 3), 2), ((2, 6, 2, 2), 3), ((1, 3, 5), 1)])
def test_group_norm_backward(shape, groups):
    x, dy, g = RNG.standard_normal(shape), RNG.standard_normal(shape), RNG.standard_normal(shape[1])
    assert_decomposition_matches("group_norm_backward_input", [x, g, dy], num_groups=groups, eps=1e-5)
    assert_decomposition_matches("group_norm_backward_gamma", [x, dy], num_groups=groups, eps=1e-5)
    assert_decomposition_matches("group_norm_backward_beta", [dy])


# Rope and attention -------------------------------------------------------------------------


@pytest.mark.parametrize(("shape", "n_rot", "table"), [((2, 3, 4), 4, (3, 2)), ((1, 2, 3, 6), 4, (3, 2))])
def test_rope_backward(shape, n_rot, table):
    dy, cos, sin = RNG.standard_normal(shape), RNG.standard_normal(table), RNG.standard_normal(table)
    assert_decomposition_matches("rope_backward", [dy, cos, sin], head_dim=shape[-1], n_rot=n_rot)


ATTENTION = {
    "plain": dict(mask_kind="none"),
    "causal_fewer_keys": dict(mask_kind="causal", sq=5, sk=3),
    "sliding_window": dict(mask_kind="sliding_window", window=2),
    "custom_empty_row": dict(mask_kind="custom"),
    "bias_with_inf": dict(mask_kind="bias"),
    "softcap_scale_gqa": dict(mask_kind="causal", kv_heads=1, score_scale=0.6, attn_logit_softcap=1.5),
}


@pytest.mark.parametrize("wrt", ["query", "key", "value"])
@pytest.mark.parametrize("case", sorted(ATTENTION))
def test_attention_backward(case, wrt):
    options = dict(ATTENTION[case])
    sq, sk, kv_heads = options.pop("sq", 3), options.pop("sk", 4), options.pop("kv_heads", 2)
    q, dy = RNG.standard_normal((2, 4, sq, 3)), RNG.standard_normal((2, 4, sq, 3))
    k, v = RNG.standard_normal((2, kv_heads, sk, 3)), RNG.standard_normal((2, kv_heads, sk, 3))
    mask = None
    if options["mask_kind"] == "custom":
        mask = (RNG.random((2, sk)) < 0.5).astype(np.float64)
        mask[0] = 0.0
    elif options["mask_kind"] == "bias":
        mask = RNG.standard_normal((2, 1, sq, sk))
        mask[1, 0, 0, :] = -np.inf  # a row all -inf: zero weights
    assert_decomposition_matches(
        "attention_backward", [q, k, v, dy, mask], wrt=wrt, num_heads=4, head_dim=3, **options
    )


def test_causal_attention_with_a_dynamic_sequence_is_reported():
    b = GraphBuilder("f")
    q = b.input("q", [1, 2, DYNAMIC, 4])
    b.output(b.attention_backward(q, q, q, q, wrt="query", num_heads=2, head_dim=4, mask_kind="causal"))
    with pytest.raises(
        OpError, match=r"the query and key lengths of a causal mask \[\?, \?\] must be static"
    ):
        decompose(b.module())


# Convolution and pooling -------------------------------------------------------------------

CONV = {
    "plain": dict(x=(1, 2, 5, 5), cout=3, k=(3, 3)),
    "stride_padding": dict(x=(2, 2, 6, 5), cout=2, k=(3, 2), stride=(2, 2), padding=(1, 1)),
    "stride_remainder": dict(x=(1, 1, 7, 6), cout=2, k=(2, 3), stride=(3, 2)),
    "dilation": dict(x=(1, 2, 6, 6), cout=2, k=(2, 2), dilation=(2, 3), padding=(1, 0)),
    "groups": dict(x=(2, 4, 4, 4), cout=6, k=(3, 3), groups=2, padding=(1, 1)),
    "padding_beyond_kernel": dict(x=(1, 1, 3, 3), cout=1, k=(2, 2), padding=(2, 2)),
    "one_d": dict(x=(2, 3, 1, 9), cout=2, k=(1, 3), stride=(1, 2), padding=(0, 1), dilation=(1, 2)),
}


@pytest.mark.parametrize("case", sorted(CONV))
def test_conv_backward(case):
    c = dict(CONV[case])
    x_shape, cout, k = c.pop("x"), c.pop("cout"), c.pop("k")
    groups = c.get("groups", 1)
    props = dict(kernel_size=list(k), stride=list(c.get("stride", (1, 1))), padding=list(c.get("padding", (0, 0))),
                 dilation=list(c.get("dilation", (1, 1))), groups=groups)  # fmt: skip
    x, w = RNG.standard_normal(x_shape), RNG.standard_normal((cout, x_shape[1] // groups, *k))
    b = GraphBuilder("g")
    out_shape = b.conv(b.input("x", x.shape, "f64"), b.input("w", w.shape, "f64"), **props).type.get_shape()
    dy = RNG.standard_normal(out_shape)
    assert_decomposition_matches("conv_backward_input", [dy, w], input_size=list(x_shape[2:]), **props)
    assert_decomposition_matches("conv_backward_weight", [x, dy], **props)


def test_conv_backward_with_a_dynamic_batch():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 4, 5, 5], "f64")
    dy = b.input("dy", [DYNAMIC, 2, 3, 3], "f64")
    w = b.input("w", [2, 2, 3, 3], "f64")
    props = dict(kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], groups=2)
    b.output(b.conv_backward_input(dy, w, input_size=[5, 5], **props), b.conv_backward_weight(x, dy, **props))
    module = b.module()
    arrays = [
        RNG.standard_normal((3, 4, 5, 5)),
        RNG.standard_normal((3, 2, 3, 3)),
        RNG.standard_normal((2, 2, 3, 3)),
    ]
    before = run_function(module, "f", arrays)
    after = run_function(decompose(module), "f", arrays)
    for want, got in zip(before, after, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


POOL = {
    "max": dict(kind="max", kernel_size=[2, 2]),
    "max_overlap_padded": dict(kind="max", kernel_size=[3, 2], stride=[1, 1], padding=[1, 1]),
    "mean": dict(kind="mean", kernel_size=[2, 3], stride=[2, 1]),
    "mean_padded": dict(kind="mean", kernel_size=[3, 3], stride=[2, 2], padding=[1, 1]),
}


@pytest.mark.parametrize("case", sorted(POOL))
def test_pool_backward(case):
    props = POOL[case]
    x = RNG.standard_normal((2, 2, 5, 5))
    b = GraphBuilder("g")
    out_shape = b.pool(b.input("x", x.shape, "f64"), **props).type.get_shape()
    assert_decomposition_matches("pool_backward", [x, RNG.standard_normal(out_shape)], **props)


def test_max_pool_ties_and_infinities_pick_the_same_cell():
    x = np.repeat(np.repeat(RNG.standard_normal((1, 2, 2, 3)), 2, axis=2), 2, axis=3)
    x[0, 0, :2, :2] = -np.inf  # a window of -inf only: its first real cell takes dy
    props = dict(kind="max", kernel_size=[3, 3], stride=[2, 2], padding=[1, 1])
    b = GraphBuilder("g")
    out_shape = b.pool(b.input("x", x.shape, "f64"), **props).type.get_shape()
    assert_decomposition_matches("pool_backward", [x, RNG.standard_normal(out_shape)], **props)


# Scans, indexing, loss -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "axis", "exclusive"), [((5,), 0, False), ((3, 4), 1, True), ((2, 3, 4), -3, False)]
)
def test_cumsum_backward(shape, axis, exclusive):
    assert_decomposition_matches(
        "cumsum_backward", [RNG.standard_normal(shape)], axis=axis, exclusive=exclusive
    )


@pytest.mark.parametrize(
    ("dy_shape", "indices", "axis", "dim_size"),
    [
        ((4, 3), np.array([4, 0, 4, 2]), 0, 5),
        ((3, 2, 2, 2), np.array([[1, 5], [1, 1]]), 1, 6),
        ((2,), np.array(3), 0, 4),
        ((2, 3), np.array([2.7, 0.2, 2.0], np.float32), 1, 3),
    ],
)
def test_gather_backward(dy_shape, indices, axis, dim_size):
    assert_decomposition_matches(
        "gather_backward", [RNG.standard_normal(dy_shape), indices], axis=axis, dim_size=dim_size
    )


def test_softmax_cross_entropy_backward_uses_the_sce_lowering():
    logits, labels, d = RNG.standard_normal((4, 5)), np.array([0, 4, 7, 2]), RNG.standard_normal(4)
    module = assert_decomposition_matches("softmax_cross_entropy_backward", [logits, labels, d], rtol=1e-12)
    assert "mir.iota" in str(module)


def test_softmax_cross_entropy_backward_ignored_rows_and_neg_inf_logits():
    """Ignored rows get 0 whatever their d_loss (inf here); -inf logits stay out of the way."""
    logits = RNG.standard_normal((4, 5))
    logits[[0, 2], [3, 1]] = -np.inf
    labels, d = np.array([[0], [-1], [2], [-1]]), np.array([0.5, np.inf, -1.0, np.nan])
    module = assert_decomposition_matches(
        "softmax_cross_entropy_backward", [logits, labels, d], rtol=1e-12, ignore_index=-1
    )
    (grad,) = run_function(module, "f", [logits, labels, d])
    assert np.all(grad[[1, 3]] == 0) and np.all(np.isfinite(grad))


# The pass -------------------------------------------------------------------------------


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=6, ops=KERNELS))
def test_random_graphs_compute_the_same_after_decomposition(module):
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    after = run_function(decompose(module), None, inputs)
    assert kernels_in(module) == []
    for want, got in zip(before, after, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)


def test_keep_preserves_the_named_kernels_only():
    b = GraphBuilder("f")
    x, dy = b.input("x", [3]), b.input("dy", [3])
    b.output(b.relu_backward(x, dy), b.activation_backward(x, dy, kind="tanh"), b.stop_gradient(x))
    module = decompose(b.module(), keep=("mir.relu_backward",))
    names = [op.name for op in module.walk()]
    assert "mir.relu_backward" in names and "mir.activation_backward" not in names
    assert "mir.stop_gradient" in names


def test_keep_rejects_names_that_are_no_kernel():
    b = GraphBuilder("f")
    b.output(b.input("x", [3]))
    module = b.module()
    with pytest.raises(
        PassFailedException, match="keep=mir.relu names no backward kernel with a decomposition"
    ):
        DecomposeBackwardPass(keep=("mir.relu",)).apply(make_context(), module)
    with pytest.raises(PassFailedException, match="keep=relu_backward names no backward kernel"):
        DecomposeBackwardPass(keep=("relu_backward",)).apply(Context(), module)


def test_a_decomposed_graph_holds_only_ops_outside_the_backward_group():
    """What second-order autodiff needs: no kernel without a VJP rule is left."""
    module, _ = one_op_graph("attention_backward", [RNG.standard_normal((1, 2, 3, 4))] * 4 + [None],
                             wrt="key", num_heads=2, head_dim=4, mask_kind="sliding_window", window=2)  # fmt: skip
    decompose(module)
    assert not any(type(op) in bw.OPS for op in module.walk())
