"""NaN propagation, signed zeros and bf16 rounding between ops: the interpreter, IREE CPU
and XLA CPU give the documented value (issue 34), each checked against an independent
oracle (IEEE 754-2019's `maximum`/`minimum` and products, PyTorch's fake quantisation and
attention, ml_dtypes' bf16 rounding of each step).

One module of many functions, compiled once per backend.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("jax")
pytest.importorskip("iree.compiler")

from rlx_xdsl.backends.iree import IreeModule  # noqa: E402
from rlx_xdsl.backends.xla import XlaModule  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402

inf, nan = math.inf, math.nan
bf16 = ml_dtypes.bfloat16

TEXT = """
func.func @fq(%x: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %t = mir.fake_quantize %x bits = 8 ste = identity scale_mode = per_batch : (tensor<4x3xf32>) -> tensor<4x3xf32>
  %c = mir.fake_quantize %x bits = 4 axis = 1 ste = identity scale_mode = per_batch : (tensor<4x3xf32>) -> tensor<4x3xf32>
  func.return %t, %c : tensor<4x3xf32>, tensor<4x3xf32>
}
func.func @att(%q: tensor<1x2x2x4xf32>, %k: tensor<1x2x3x4xf32>, %v: tensor<1x2x3x4xf32>, %b: tensor<2x1x3xf32>) -> tensor<1x2x2x4xf32> {
  %o = mir.attention %q, %k, %v, %b num_heads = 2 head_dim = 4 mask_kind = bias : (tensor<1x2x2x4xf32>, tensor<1x2x3x4xf32>, tensor<1x2x3x4xf32>, tensor<2x1x3xf32>) -> tensor<1x2x2x4xf32>
  func.return %o : tensor<1x2x2x4xf32>
}
func.func @act(%x: tensor<6xf32>, %dy: tensor<6xf32>) -> (tensor<6xf32>, tensor<6xf32>) {
  %r = mir.relu_backward %x, %dy : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  %s = mir.activation_backward silu %x, %dy : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
  func.return %r, %s : tensor<6xf32>, tensor<6xf32>
}
func.func @grads(%x: tensor<8x1xf32>, %dy: tensor<8x1xf32>) -> (tensor<8x1xf32>, tensor<8x1xf32>) {
  %g = mir.activation_backward gelu_approx %x, %dy : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  %q = mir.fake_quantize_backward %x, %dy bits = 2 ste = clipped_identity scale_mode = per_batch : (tensor<8x1xf32>, tensor<8x1xf32>) -> tensor<8x1xf32>
  func.return %g, %q : tensor<8x1xf32>, tensor<8x1xf32>
}
func.func @zeros(%a: tensor<8xf32>, %b: tensor<8xf32>, %lo: tensor<8xf32>, %hi: tensor<8xf32>, %p: tensor<1x1x2x6xf32>)
    -> (tensor<8xf32>, tensor<8xf32>, tensor<1x1x1x3xf32>, tensor<8xf32>) {
  %m = mir.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %l = mir.max %a, %lo : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %c = mir.min %l, %hi : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %mx = mir.pool %p kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x1x2x6xf32>) -> tensor<1x1x1x3xf32>
  %e = mir.erf %a : (tensor<8xf32>) -> tensor<8xf32>
  func.return %m, %c, %mx, %e : tensor<8xf32>, tensor<8xf32>, tensor<1x1x1x3xf32>, tensor<8xf32>
}
func.func @chain(%x: tensor<4xbf16>, %y: tensor<4xbf16>) -> (tensor<4xbf16>, tensor<4xbf16>) {
  %a = mir.mul %x, %y : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %b = mir.add %a, %x : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
  %r = mir.elementwise_region (%x, %y) : (tensor<4xbf16>, tensor<4xbf16>) -> (tensor<4xbf16>) {
  ^bb0(%p: tensor<4xbf16>, %q: tensor<4xbf16>):
    %c = mir.mul %p, %q : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
    %d = mir.add %c, %p : (tensor<4xbf16>, tensor<4xbf16>) -> tensor<4xbf16>
    mir.yield %d : tensor<4xbf16>
  }
  func.return %b, %r : tensor<4xbf16>, tensor<4xbf16>
}
"""


@pytest.fixture(scope="module")
def module():
    return parse_module(TEXT)


class Backend:
    def __init__(self, name: str, module):
        self.name, self.module = name, module
        self.iree = IreeModule(module) if name == "iree" else None

    def __call__(self, function: str, *inputs):
        if self.name == "interpreter":
            return run_function(self.module, function, list(inputs))
        if self.name == "iree":
            return self.iree.run(function, list(inputs))
        return [np.asarray(x) for x in XlaModule(self.module, function=function)(*inputs)]


@pytest.fixture(scope="module", params=["interpreter", "iree", "xla"])
def run(request, module):
    return Backend(request.param, module)


def same_bits(got, want) -> bool:
    """Equal values with the same sign of zero, NaN where NaN is expected."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    both_nan = np.isnan(got) & np.isnan(want)
    return bool(np.all(both_nan | (got == want) & (np.signbit(got) == np.signbit(want))))


def ieee_maximum(a: float, b: float) -> float:
    """IEEE 754-2019 §9.6 `maximum`: NaN propagates, +0 is above -0."""
    if math.isnan(a) or math.isnan(b):
        return nan
    if a == b == 0:
        return 0.0 if not (math.copysign(1, a) < 0 and math.copysign(1, b) < 0) else -0.0
    return max(a, b)


def ieee_minimum(a: float, b: float) -> float:
    return -ieee_maximum(-a, -b)


def torch_fake_quantize(x: np.ndarray, bits: int, axis: int | None) -> np.ndarray:
    """The documented rule with PyTorch computing the grid: `s = max|x| / qmax` per
    channel, or 1 where that range is not positive (NaN included, so a NaN leaves the
    rest of its channel on the unit grid), then `torch.fake_quantize_per_*_affine`."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    t = torch.from_numpy(x)
    if axis is None:
        r = t.abs().max()
        s = float(r / qmax) if r > 0 else 1.0
        return torch.fake_quantize_per_tensor_affine(t, s, 0, qmin, qmax).numpy()
    r = t.abs().amax(dim=0)
    s = torch.where(r > 0, r / qmax, torch.ones_like(r))
    zero = torch.zeros(r.shape, dtype=torch.int32)
    return torch.fake_quantize_per_channel_affine(t, s, zero, axis, qmin, qmax).numpy()


def test_one_nan_leaves_the_rest_of_its_channel_quantised(run):
    """Documented decision (docs/deviations.md, "fake_quantize with a NaN"): a NaN range
    takes the step 1, so the NaN element stays NaN and nothing else is poisoned."""
    x = np.array([[1.5, 2.0, 3.0], [nan, 5.0, -6.25], [7.0, -8.0, 9.0], [0.3, 1.0, 1.0]], np.float32)
    per_tensor, per_channel = run("fq", x)
    for got, want in ((per_tensor, torch_fake_quantize(x, 8, None)), (per_channel, torch_fake_quantize(x, 4, 1))):
        finite = ~np.isnan(x)
        assert np.isnan(got[~finite]).all()
        assert same_bits(got[finite], want[finite]), (got, want)
    assert per_tensor[0, 0] == 2.0 and per_channel[:, 0].tolist()[2:] == [7.0, 0.0]  # step 1


def test_a_nan_in_an_attention_bias_makes_its_rows_nan(run):
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal(s).astype(np.float32) for s in ((1, 2, 2, 4), (1, 2, 3, 4), (1, 2, 3, 4)))
    bias = np.array([[[0.5, nan, 0.0]], [[0.25, -1.0, 0.0]]], np.float32)  # head 0 holds the NaN
    (got,) = run("att", q, k, v, bias)
    want = torch.nn.functional.scaled_dot_product_attention(
        *(torch.from_numpy(a) for a in (q, k, v)), attn_mask=torch.from_numpy(bias)[None]
    ).numpy()
    assert np.isnan(got[:, 0]).all() and np.isnan(want[:, 0]).all()
    np.testing.assert_allclose(got[:, 1], want[:, 1], rtol=1e-5, atol=1e-6)


def test_activation_gradients_propagate_nan(run):
    x = np.array([nan, 1.0, -0.0, inf, -inf, 2.0], np.float32)
    dy = np.array([1.0, nan, 1.0, 0.0, 0.0, inf], np.float32)
    relu_dx, silu_dx = run("act", x, dy)
    # relu': 1 for x > 0 else 0 (NaN is not > 0), times dy: IEEE products.
    assert same_bits(relu_dx, [0.0 * 1.0, 1.0 * nan, 0.0, 1.0 * 0.0, 0.0, 1.0 * inf])
    # silu'(x) = s(x) (1 + x (1 - s(x))): NaN at x = NaN, dy = NaN and at ±inf (0 * inf inside).
    s = 1 / (1 + np.exp(-x.astype(np.float64)))
    with np.errstate(invalid="ignore", over="ignore"):
        want = dy * (s * (1 + x * (1 - s)))
    assert (np.isnan(silu_dx) == np.isnan(want)).all(), (silu_dx, want)
    ok = ~np.isnan(want)
    np.testing.assert_allclose(silu_dx[ok], want[ok], rtol=1e-6)


def test_gradients_are_ieee_products_of_dy_and_the_derivative(run):
    """`dy * d(x)`: inf * 0 is NaN and -dy * 0 is -0 (XLA's VJP sum and its `select` for a
    product with a 0/1 mask lost both)."""
    x = np.array([[-0.0], [0.0], [-0.0], [1.0], [nan], [-3.0], [2.0], [0.5]], np.float32)
    dy = np.array([[-0.0], [-0.0], [inf], [-0.0], [1.0], [inf], [nan], [-2.0]], np.float32)
    gelu_dx, fq_dx = run("grads", x, dy)
    t = torch.from_numpy(x).requires_grad_()
    torch.nn.functional.gelu(t, approximate="tanh").sum().backward()
    with np.errstate(invalid="ignore"):
        want = dy * t.grad.numpy()
    special = (want == 0) | ~np.isfinite(want)
    assert same_bits(gelu_dx[special], want[special]), (gelu_dx, want)
    np.testing.assert_allclose(gelu_dx[~special], want[~special], rtol=1e-6)
    # per_batch range: max|x| is NaN, so s = 1 and the 2-bit grid [-2, 1] keeps |x| <= 1.
    with np.errstate(invalid="ignore"):
        inside = ((np.rint(x) >= -2) & (np.rint(x) <= 1)).astype(np.float32)
        assert same_bits(fq_dx, dy * inside), (fq_dx, dy * inside)


def test_products_clamps_and_pools_keep_the_sign_of_zero(run):
    """`mul` (the sign is the xor of the signs), clamp as `min(max(x, lo), hi)` (how the
    importers write Clip/clamp), max pooling (`mir.pool` has no min kind) and `erf` (odd:
    erf(-0) is -0)."""
    a = np.array([0.0, -0.0, inf, nan, -0.0, 0.0, -3.0, -0.0], np.float32)
    b = np.array([-1.0, -2.0, 0.0, 0.0, -0.0, nan, 0.0, 5.0], np.float32)
    lo = np.array([-0.0, -0.0, 0.0, -1.0, 0.0, -0.0, -0.0, -0.0], np.float32)
    hi = np.array([0.0, -0.0, 0.0, 1.0, 0.0, 0.0, 0.0, -0.0], np.float32)
    p = np.array([[[[-0.0, -0.0, 0.0, -0.0, nan, -0.0], [-0.0, -0.0, -0.0, -0.0, 0.0, 0.0]]]], np.float32)
    prod, clamp, pmax, erf = run("zeros", a, b, lo, hi, p)
    assert same_bits(prod, [float(x) * float(y) if not (math.isinf(x) and y == 0) else nan for x, y in zip(a, b)])
    assert same_bits(clamp, [ieee_minimum(ieee_maximum(float(x), float(l)), float(h)) for x, l, h in zip(a, lo, hi)])
    special = (a == 0) | ~np.isfinite(a)  # erf(±0) = ±0, erf(±inf) = ±1, erf(NaN) = NaN; others are libm's
    assert same_bits(erf[special], [math.erf(x) if not math.isnan(x) else nan for x in a[special].tolist()])
    windows = [p[0, 0, :, 2 * j : 2 * j + 2].ravel().tolist() for j in range(3)]
    assert same_bits(pmax.ravel(), [ieee_maximum(ieee_maximum(w[0], w[1]), ieee_maximum(w[2], w[3])) for w in windows])


def test_bf16_chains_and_regions_round_after_each_op(run):
    x = np.array([0.1, 0.7, -3.0, 250.0], bf16)
    y = np.array([0.9, 0.3, 1.0078125, 1.5], bf16)
    # ml_dtypes rounds each step to bf16 (f32 arithmetic on bf16 values is exact enough:
    # a product of two 8-bit significands fits in f32).
    step = (x.astype(np.float32) * y.astype(np.float32)).astype(bf16)
    want = (step.astype(np.float32) + x.astype(np.float32)).astype(bf16)
    chain, region = run("chain", x, y)
    assert float(want[0]) == 0.189453125  # the example; rounding once gives 0.19043
    assert chain.tobytes() == want.tobytes() and region.tobytes() == want.tobytes(), (chain, region, want)
