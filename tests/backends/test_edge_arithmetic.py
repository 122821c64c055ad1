"""Arithmetic on edge values (±0, ±inf, NaN, integer limits, huge arguments): the interpreter,
IREE CPU and XLA CPU give the documented value, each checked against an independent oracle
(IEEE 754-2019's tables, Python's integer arithmetic and C `fmod`, mpmath), or the documented
deviation (`docs/deviations.md`, "Lowering to upstream MLIR and IREE").

One module of many functions, compiled once per backend.
"""

from __future__ import annotations

import math

import mpmath  # the test extra: an independent oracle at high precision
import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("iree.compiler")

from rlx_xdsl.backends.iree import IreeModule  # noqa: E402
from rlx_xdsl.backends.xla import XlaModule  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.ir.diagnostics import OpError  # noqa: E402
from rlx_xdsl.numerics import KernelError  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402

inf, nan = math.inf, math.nan

# IEEE 754-2019 §9.2.1 pow (C's pow): (base, exponent, value).
POW = [
    (-2.0, 3.0, -8.0), (-2.0, 2.0, 4.0), (-8.0, 1 / 3, nan), (0.0, 0.0, 1.0), (-inf, 3.0, -inf),
    (nan, 0.0, 1.0), (1.0, nan, 1.0), (-0.0, 3.0, -0.0), (-0.0, -3.0, -inf), (-1.0, inf, 1.0),
    (-1.0, -inf, 1.0), (-inf, 0.5, inf), (-2.0, inf, inf), (-0.5, inf, 0.0), (-inf, -3.0, -0.0),
    (2.0, 10.0, 1024.0), (-3.0, -2.0, 1 / 9), (0.0, -2.0, inf), (nan, 1.0, nan), (-0.0, 0.5, 0.0),
]  # fmt: skip
N = len(POW)

I32_MIN = -(2**31)
# Integer division: (a, b); the right value is truncation (Python's ints), with the
# lowering's rule where the interpreter raises: x / 0 is 0, MIN / -1 wraps to MIN.
DIV = [(-7, 2), (7, -2), (-7, -2), (I32_MIN, -1), (I32_MIN, -7), (5, 0), (-5, 3), (2**31 - 1, -1)]
# Integer powers: (a, b) with wrapping products; a negative exponent gives 0 (documented).
IPOW = [(2, -1), (-2, 3), (3, 40), (2, 31), (7, 0), (-1, -3), (-3, 19), (2, 32)]
I64_POW = [(7, 100), (3, 63), (2, 64), (-3, 41)]

TEXT = f"""
func.func @pow(%a: tensor<{N}xf32>, %b: tensor<{N}xf32>) -> tensor<{N}xf32> {{
  %p = mir.pow %a, %b : (tensor<{N}xf32>, tensor<{N}xf32>) -> tensor<{N}xf32>
  func.return %p : tensor<{N}xf32>
}}
func.func @div(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {{
  %q = mir.div %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  func.return %q : tensor<8xi32>
}}
func.func @fmod(%a: tensor<1xi32>, %b: tensor<1xi32>) -> tensor<1xi32> {{
  %q = mir.div %a, %b : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  %m = mir.mul %b, %q : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  %r = mir.sub %a, %m : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
  func.return %r : tensor<1xi32>
}}
func.func @ipow(%a: tensor<8xi32>, %b: tensor<8xi32>) -> tensor<8xi32> {{
  %p = mir.pow %a, %b : (tensor<8xi32>, tensor<8xi32>) -> tensor<8xi32>
  func.return %p : tensor<8xi32>
}}
func.func @ipow64(%a: tensor<4xi64>, %b: tensor<4xi64>) -> tensor<4xi64> {{
  %p = mir.pow %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  func.return %p : tensor<4xi64>
}}
func.func @zeros(%a: tensor<4xf32>, %b: tensor<4xf32>, %r: tensor<2x3xf32>, %x: tensor<1x1x2x2xf32>)
    -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x1x1x1xf32>) {{
  %mx = mir.max %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %mn = mir.min %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %re = mir.relu %a : (tensor<4xf32>) -> tensor<4xf32>
  %rmax = mir.reduce max %r axes = [1] : (tensor<2x3xf32>) -> tensor<2xf32>
  %rmin = mir.reduce min %r axes = [1] : (tensor<2x3xf32>) -> tensor<2xf32>
  %pool = mir.pool %x kind = max kernel_size = [2, 2] stride = [2, 2] padding = [0, 0] : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  func.return %mx, %mn, %re, %rmax, %rmin, %pool : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<2xf32>, tensor<2xf32>, tensor<1x1x1x1xf32>
}}
func.func @mean(%a: tensor<4xi8>, %b: tensor<3xi64>) -> (tensor<i8>, tensor<i64>) {{
  %p = mir.reduce mean %a axes = [0] : (tensor<4xi8>) -> tensor<i8>
  %q = mir.reduce mean %b axes = [0] : (tensor<3xi64>) -> tensor<i64>
  func.return %p, %q : tensor<i8>, tensor<i64>
}}
func.func @trig32(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {{
  %s = mir.sin %a : (tensor<4xf32>) -> tensor<4xf32>
  %c = mir.cos %a : (tensor<4xf32>) -> tensor<4xf32>
  %t = mir.tan %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %s, %c, %t : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}}
func.func @trig64(%a: tensor<4xf64>) -> (tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>) {{
  %s = mir.sin %a : (tensor<4xf64>) -> tensor<4xf64>
  %c = mir.cos %a : (tensor<4xf64>) -> tensor<4xf64>
  %t = mir.tan %a : (tensor<4xf64>) -> tensor<4xf64>
  %h = mir.tanh %a : (tensor<4xf64>) -> tensor<4xf64>
  %n = mir.atan %a : (tensor<4xf64>) -> tensor<4xf64>
  func.return %s, %c, %t, %h, %n : tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>, tensor<4xf64>
}}
func.func @gelu(%a: tensor<3xf32>) -> tensor<3xf32> {{
  %g = mir.gelu %a : (tensor<3xf32>) -> tensor<3xf32>
  func.return %g : tensor<3xf32>
}}
func.func @half(%a: tensor<4xf16>, %x: tensor<4x1xf16>, %w: tensor<1x1xf16>, %b: tensor<1xf16>)
    -> (tensor<4xf16>, tensor<4xf16>, tensor<4x1xf16>, tensor<4x1xf16>) {{
  %g = mir.gelu %a : (tensor<4xf16>) -> tensor<4xf16>
  %t = mir.gelu_approx %a : (tensor<4xf16>) -> tensor<4xf16>
  %fg = mir.fused_matmul_bias_act %x, %w, %b activation = gelu : (tensor<4x1xf16>, tensor<1x1xf16>, tensor<1xf16>) -> tensor<4x1xf16>
  %ft = mir.fused_matmul_bias_act %x, %w, %b activation = gelu_approx : (tensor<4x1xf16>, tensor<1x1xf16>, tensor<1xf16>) -> tensor<4x1xf16>
  func.return %g, %t, %fg, %ft : tensor<4xf16>, tensor<4xf16>, tensor<4x1xf16>, tensor<4x1xf16>
}}
"""

EMPTY_MAX = """
func.func @f(%a: tensor<2x0xf32>) -> tensor<2xf32> {
  %p = mir.reduce max %a axes = [1] : (tensor<2x0xf32>) -> tensor<2xf32>
  func.return %p : tensor<2xf32>
}
"""


@pytest.fixture(scope="module")
def module():
    return parse_module(TEXT)


class Backend:
    """`run(name, *inputs) -> outputs` on one backend, each compiled once."""

    def __init__(self, name: str, module):
        self.name, self.module, self._compiled = name, module, {}
        if name == "iree":
            self._compiled[None] = IreeModule(module)

    def __call__(self, function: str, *inputs):
        if self.name == "interpreter":
            return run_function(self.module, function, list(inputs))
        if self.name == "iree":
            return self._compiled[None].run(function, list(inputs))
        if function not in self._compiled:
            self._compiled[function] = XlaModule(self.module, function=function)
        return [np.asarray(x) for x in self._compiled[function](*inputs)]


@pytest.fixture(scope="module", params=["interpreter", "iree", "xla"])
def run(request, module):
    return Backend(request.param, module)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in units in the last place (same-signed finite values; 0 where both are equal)."""
    uint = np.uint32 if got.dtype == np.float32 else np.uint64
    g, w = got.view(uint).astype(np.int64), want.astype(got.dtype).view(uint).astype(np.int64)
    return np.where(got == want.astype(got.dtype), 0, np.abs(g - w))


def same_bits(got, want) -> bool:
    """Equal values with the same sign of zero, NaN where NaN is expected."""
    got, want = np.asarray(got), np.asarray(want, got.dtype)
    return bool(np.all((got == want) & (np.signbit(got) == np.signbit(want)) | np.isnan(got) & np.isnan(want)))


def wrap(value: int, bits: int) -> int:
    return (value + (1 << (bits - 1))) % (1 << bits) - (1 << (bits - 1))


def truncating(a: int, b: int) -> int:
    """a / b truncated toward zero (the lowering's 0 for b == 0), wrapped to i32."""
    if b == 0:
        return 0
    q = abs(a) // abs(b)
    return wrap(q if (a < 0) == (b < 0) else -q, 32)


def test_pow_is_ieee_pow(run):
    a = np.array([p[0] for p in POW], np.float32)
    b = np.array([p[1] for p in POW], np.float32)
    want = np.array([p[2] for p in POW], np.float32)
    (got,) = run("pow", a, b)
    special = ~np.isfinite(want) | (want == 0) | (np.abs(want) == 1) | (want == 1024)
    assert same_bits(got[special], want[special]), (got, want)
    assert np.all(ulps(got[~special], want[~special]) <= 4), (got, want)


def test_integer_division_truncates(run):
    a = np.array([d[0] for d in DIV], np.int32)
    b = np.array([d[1] for d in DIV], np.int32)
    if run.name == "interpreter":  # x / 0 is a run-time error there; the other lanes agree
        with pytest.raises(KernelError, match="'mir.div' integer division by zero"):
            run("div", a, b)
        b = np.where(b == 0, 1, b).astype(np.int32)
    (got,) = run("div", a, b)
    assert got.tolist() == [truncating(int(x), int(y)) for x, y in zip(a, b)]


def test_c_fmod_of_int_min_by_minus_seven(run):
    # ONNX Mod(fmod=1) as the importer writes it: a - b * (a / b); C's fmod is the oracle.
    (got,) = run("fmod", np.array([I32_MIN], np.int32), np.array([-7], np.int32))
    assert got.tolist() == [int(math.fmod(I32_MIN, -7))] == [-2]


def test_integer_pow_wraps(run):
    a = np.array([c[0] for c in IPOW], np.int32)
    b = np.array([c[1] for c in IPOW], np.int32)
    if run.name == "interpreter":  # a negative exponent is a run-time error there
        with pytest.raises(KernelError, match="'mir.pow' integer power with a negative exponent"):
            run("ipow", a, b)
        b = np.abs(b)
    (got,) = run("ipow", a, b)
    assert got.tolist() == [0 if y < 0 else wrap(int(x) ** int(y), 32) for x, y in zip(a, b)]
    (got,) = run("ipow64", np.array([c[0] for c in I64_POW], np.int64), np.array([c[1] for c in I64_POW], np.int64))
    assert got.tolist() == [wrap(x**y, 64) for x, y in I64_POW]


def test_signed_zero_follows_ieee_maximum_and_minimum(run):
    a = np.array([0.0, -0.0, -0.0, nan], np.float32)
    b = np.array([-0.0, 0.0, -0.0, 1.0], np.float32)
    rows = np.array([[-0.0, 0.0, -0.0], [0.0, -0.0, 0.0]], np.float32)
    window = np.array([-0.0, 0.0, -0.0, -0.0], np.float32).reshape(1, 1, 2, 2)
    mx, mn, relu, rmax, rmin, pool = run("zeros", a, b, rows, window)
    # IEEE 754-2019 maximum/minimum: -0 < +0, NaN propagates; relu is maximum(x, +0).
    assert same_bits(mx, [0.0, 0.0, -0.0, nan])
    assert same_bits(mn, [-0.0, -0.0, -0.0, nan])
    assert same_bits(relu, [0.0, 0.0, 0.0, nan])
    assert same_bits(rmax, [0.0, 0.0]) and same_bits(rmin, [-0.0, -0.0])
    assert same_bits(pool, np.zeros((1, 1, 1, 1), np.float32))


def test_integer_mean_sums_in_64_bits(run):
    big = np.array([2**61 + 1, 2**61 + 1, 1], np.int64)  # f64 would round the sum
    mean8, mean64 = run("mean", np.array([127, 127, 0, 0], np.int8), big)
    assert int(mean8) == (127 + 127) // 4
    assert int(mean64) == (2**62 + 3) // 3


def test_large_trig_arguments_and_f64_transcendentals(run):
    mpmath.mp.prec = 200
    x32 = np.array([0.5, -2.0, 3.4e38, -3.4e38], np.float32)
    for fn, got in zip((mpmath.sin, mpmath.cos, mpmath.tan), run("trig32", x32)):
        want = np.array([float(fn(mpmath.mpf(float(v)))) for v in x32])
        assert np.all(ulps(got, want) <= 1), (fn, got, want)
    x64 = np.array([0.5, -2.0, 3.4e38, 1e300])
    fns = (mpmath.sin, mpmath.cos, mpmath.tan, mpmath.tanh, mpmath.atan)
    for fn, got in zip(fns, run("trig64", x64)):
        want = np.array([float(fn(mpmath.mpf(float(v)))) for v in x64])
        assert np.all(ulps(got, want) <= 1), (fn, got, want)


def gelu_oracle(x: float) -> float:
    mpmath.mp.prec = 200
    v = mpmath.mpf(x)
    return float(v * mpmath.ncdf(v))


def test_interpreter_gelu_f64_keeps_its_digits_in_the_tail():
    """`erfc` of the rounded `x / sqrt(2)` is off by that rounding times `x^2` (relative),
    as any f64 erfc is: 1e-13 at x = -37, not the whole value `1 + erf` loses."""
    from rlx_xdsl.interpreters.mir.elementwise import gelu

    x = np.array([-7.0, -10.0, -20.0, -37.0, 0.25])
    want = np.array([gelu_oracle(float(v)) for v in x])
    np.testing.assert_allclose(gelu(x), want, rtol=2e-13, atol=0)


def gelu_tanh_oracle(v):
    return v / (1 + mpmath.exp(-2 * mpmath.sqrt(2 / mpmath.pi) * (v + mpmath.mpf("0.044715") * v**3)))


def test_f16_gelu_is_computed_in_f64_and_rounded_once(run):
    """f16 exact and tanh GELU (alone and as a fused activation) are the exact value
    rounded once to f16 (mpmath): at x = 2^-24 GELU is just above half of x, which an f64
    result rounded to f32 (exactly 2^-25) and then to f16 (a tie, to even) makes 0."""
    mpmath.mp.prec = 200
    x = np.array([2.0**-24, -2.0**-24, 1.5, -3.0], np.float16)
    fns = (lambda v: v * mpmath.ncdf(v), gelu_tanh_oracle)
    wants = [np.array([float(fn(mpmath.mpf(float(v)))) for v in x]).astype(np.float16) for fn in fns]
    got = run("half", x, x.reshape(4, 1), np.ones((1, 1), np.float16), np.zeros(1, np.float16))
    for name, g, want in zip(("gelu", "gelu_approx", "fused gelu", "fused gelu_approx"), got, wants * 2):
        assert same_bits(np.ravel(g), want), (name, np.ravel(g), want)


def test_an_empty_max_reduction_is_a_located_error_everywhere():
    module = parse_module(EMPTY_MAX)
    x = np.zeros((2, 0), np.float32)
    message = r"max over zero elements \(axes \[1\] of shape \[2, 0\]\)"
    with pytest.raises(KernelError, match=message):
        run_function(module, "f", [x])
    with pytest.raises(OpError, match="cannot lower 'mir.reduce': " + message):
        IreeModule(module)
    with pytest.raises(OpError, match="'mir.reduce' " + message):
        XlaModule(module, function="f")(x)
