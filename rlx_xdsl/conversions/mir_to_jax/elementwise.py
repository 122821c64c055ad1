"""Elementwise ops: `jax.numpy` ufuncs, comparisons, `where`, casts, constants and iota."""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl import dtypes
from rlx_xdsl.conversions import special
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, result_dtype, rounded, widen, with_op
from rlx_xdsl.dialects.base import like_at_run_time, tensor_type
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.ir.dense import dense_to_numpy
from rlx_xdsl.shapes import sized_like

JAX_OPS.add(
    ew.ConstantOp, lambda op, **_: (jnp.asarray(np.array(dense_to_numpy(op.value))),)
)
JAX_OPS.add(
    ew.IotaOp,
    lambda op, like=None, **_: (
        jax.lax.broadcasted_iota(
            jnp.int64, sized_like(tensor_type(op.result).get_shape(), *like_at_run_time(op, like)), op.normalized_dimension()
        ).astype(result_dtype(op)),
    ),
)


def convert(x, dtype):
    """`x` as `dtype` by MIR's cast rules: anything to i1 is "nonzero"; complex to real
    keeps the real part; float to integer truncates and saturates, NaN giving 0."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return x != 0
    if jnp.iscomplexobj(x) and dtype.kind != "c":
        x = jnp.real(x)
    if dtype.kind in "iu" and jnp.issubdtype(x.dtype, jnp.floating):
        info = np.iinfo(dtype)
        t = jnp.trunc(x.astype(jnp.float64))
        low, high = t < info.min, t >= float(info.max) + 1.0
        inside = jnp.where(jnp.isnan(t) | low | high, 0.0, t).astype(dtype)
        return jnp.where(high, info.max, jnp.where(low, info.min, inside)).astype(dtype)
    if dtype in (jnp.bfloat16, jnp.float16) and x.dtype.itemsize >= 4 and x.dtype.kind in "iuf":
        if x.dtype.kind in "iu":
            x = _int_to_f64(x)
        if x.dtype == jnp.float64:
            x = _round_to_odd_f32(x)
    return x.astype(dtype)


@jax.custom_jvp
def _round_to_odd_f32(x):
    """f64 `x` rounded to f32 to odd (toward zero, the last bit set when inexact): rounding
    that again to bf16/f16 equals rounding `x` once (Boldo & Melquiond 2008). XLA's own
    f64 -> bf16/f16 convert rounds through f32, twice. Differentiated as a cast (its bit
    operations would otherwise read as constant to JAX)."""
    nearest = x.astype(jnp.float32)
    back = nearest.astype(jnp.float64)
    bits = jax.lax.bitcast_convert_type(nearest, jnp.int32)
    fix = (back != x) & ~jnp.isnan(x) & ((bits & 1) == 0)
    step = jnp.where(jnp.abs(back) > jnp.abs(x), np.int32(-1), np.int32(1))
    return jax.lax.bitcast_convert_type(jnp.where(fix, bits + step, bits), jnp.float32)


@_round_to_odd_f32.defjvp
def _round_to_odd_f32_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return _round_to_odd_f32(x), t.astype(jnp.float32)


def _int_to_f64(x):
    """An integer as f64, exactly, or (64-bit, above 2^53) with the bits below bit 12 folded
    into a sticky bit 11, so any later rounding to 51 bits or fewer is the rounding of `x`."""
    if x.dtype.itemsize <= 4:
        return x.astype(jnp.float64)
    negative = x < 0
    magnitude = jnp.where(negative, -x, x).astype(jnp.uint64)  # |INT64_MIN| wraps to 2^63 unsigned
    low = magnitude & np.uint64(0xFFF)
    folded = (magnitude & ~np.uint64(0xFFF)) | jnp.where(low != 0, np.uint64(0x800), np.uint64(0))
    value = jnp.where(magnitude >= np.uint64(1 << 53), folded, magnitude).astype(jnp.float64)
    return jnp.where(negative, -value, value)


JAX_OPS.add(ew.CastOp, lambda op, x, **_: (convert(x, result_dtype(op)),))
JAX_OPS.add(ew.WhereOp, one(lambda c, t, f: jnp.where(c.astype(bool), t, f)))
_COMPARE = {
    "eq": jnp.equal,
    "ne": jnp.not_equal,
    "lt": jnp.less,
    "le": jnp.less_equal,
    "gt": jnp.greater,
    "ge": jnp.greater_equal,
}


def _compare(op, a, b):
    """In the operands' promoted dtype, as the interpreter (i32 against f32 compares in f64;
    JAX's own promotion would round the i32 to f32)."""
    common = dtypes.numpy_dtype(dtypes.promote(op.lhs.type.element_type, op.rhs.type.element_type))
    return _COMPARE[op.predicate.data.value](a.astype(common), b.astype(common))


JAX_OPS.add(ew.CompareOp, lambda op, a, b, **_: (_compare(op, a, b),))


def _binary(fn):
    """Float results compute in the result dtype (i32 * f32 -> f64 is exact in f64);
    integer results in the result dtype too (i8 / i32 divides in i32)."""

    def formula(op, a, b):
        dtype = result_dtype(op)
        if dtype not in (jnp.float16, jnp.bfloat16):
            a, b = a.astype(dtype), b.astype(dtype)
        return fn(a, b)

    return with_op(formula)


def _subtract(a, b):
    """On i1 operands, `a - b` is nonzero where they differ (jnp refuses bool subtraction)."""
    return a != b if a.dtype == b.dtype == jnp.bool_ else jnp.subtract(a, b)


def _negative(x):
    """`-x`; on i1, `-1` is nonzero: true stays true (jnp refuses bool negation)."""
    return x if x.dtype == jnp.bool_ else jnp.negative(x)


def multiply(a, b):
    """`a * b`; complex operands (of one dtype) multiply as numpy does,
    `(ac - bd) + (ad + bc)i` with each part's product `rounded` before the add (XLA's
    complex multiply would become two multiply-adds: 1 ulp apart, or inf against NaN)."""
    if not jnp.iscomplexobj(a):
        return a * b
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    real = rounded(ar * br) - rounded(ai * bi)
    return jax.lax.complex(real, rounded(ar * bi) + rounded(ai * br))


@jax.custom_jvp
def complex_divide(a, b):
    """`a / b` of complex arrays as numpy divides them: Smith's method (R. L. Smith,
    "Algorithm 116: Complex division", CACM 5(8), 1962; numpy's `loops.c.src`), scaling by
    the larger part of b, each product `rounded` (XLA's own complex division differs from
    numpy's in the last bit on a third of random inputs, on 40% at its default level).
    A zero divisor divides each part by |0|: inf or NaN, as numpy."""
    a, b = jnp.broadcast_arrays(a, b)
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    by_real = jnp.abs(br) >= jnp.abs(bi)  # NaN: False, as C's `>=`
    rat = jnp.where(by_real, bi / br, br / bi)
    scale = 1 / jnp.where(by_real, br + rounded(bi * rat), bi + rounded(br * rat))
    real = jnp.where(by_real, ar + rounded(ai * rat), rounded(ar * rat) + ai) * scale
    imag = jnp.where(by_real, ai - rounded(ar * rat), rounded(ai * rat) - ar) * scale
    zero = (br == 0) & (bi == 0)
    real = jnp.where(zero, ar / jnp.abs(br), real)
    imag = jnp.where(zero, ai / jnp.abs(bi), imag)
    return jax.lax.complex(real, imag)


complex_divide.defjvp(
    lambda primals, tangents: (
        out := complex_divide(*primals),
        (tangents[0] - out * tangents[1]) / primals[1],
    )
)
"""Its derivative `(da - (a / b) db) / b` (the branches' unselected pieces would give NaN)."""


def divide(a, b):
    """`a / b`: IEEE for floats, numpy's Smith division for complex (`complex_divide`);
    integers truncate toward zero, with the lowering's rule where the interpreter raises
    (`x / 0` is 0, `MIN / -1` wraps to `MIN`), as IREE does.
    (`jnp.divide` of integers would divide in f64, inexact past 2**53.)"""
    if jnp.iscomplexobj(a) or jnp.iscomplexobj(b):
        return complex_divide(a, b)
    if not jnp.issubdtype(a.dtype, jnp.integer) and a.dtype != jnp.bool_:
        return jnp.divide(a, b)
    if a.dtype == jnp.bool_:  # a / true = a; a / false is inf or NaN, both true
        return a | ~b
    a, b = jnp.broadcast_arrays(a, b)  # `lax.div` does not broadcast
    zero = b == 0
    if jnp.issubdtype(a.dtype, jnp.signedinteger):
        minus_one = b == -1
        quotient = jax.lax.div(a, jnp.where(zero | minus_one, 1, b).astype(b.dtype))
        return jnp.where(zero, 0, jnp.where(minus_one, -a, quotient)).astype(a.dtype)
    return jnp.where(zero, 0, jax.lax.div(a, jnp.where(zero, 1, b).astype(b.dtype))).astype(a.dtype)


def power(a, b):
    """`a ** b`: IEEE `pow` for floats; integers multiply with wrapping, by squaring over
    every bit of `b` (`jnp.power` of i64 stops early: 7**100 is wrong), and a negative
    exponent gives 0, as IREE (the interpreter raises)."""
    if a.dtype == jnp.bool_:  # a ** false = 1, a ** true = a
        return a | ~b
    if not jnp.issubdtype(a.dtype, jnp.integer):
        return jnp.power(a, b)
    a, b = jnp.broadcast_arrays(a, b)
    result, base = jnp.ones_like(a), a
    for bit in range(np.dtype(a.dtype).itemsize * 8):
        is_set = (jax.lax.shift_right_logical(b, jnp.asarray(bit, b.dtype)) & 1) != 0
        result = jnp.where(is_set, result * base, result)
        base = base * base
    if jnp.issubdtype(a.dtype, jnp.signedinteger):
        result = jnp.where(b < 0, 0, result).astype(a.dtype)
    return result


for _op, _fn in {
    ew.AddOp: jnp.add, ew.SubOp: _subtract, ew.MulOp: multiply, ew.DivOp: divide,
    ew.MaxOp: jnp.maximum, ew.MinOp: jnp.minimum, ew.PowOp: power,
}.items():  # fmt: skip
    JAX_OPS.add(_op, _binary(_fn))


def round_half_away(x):
    """Halves away from zero, exactly: `trunc(x) + sign(x)` where `|x - trunc(x)| >= 0.5`."""
    if not jnp.issubdtype(x.dtype, jnp.floating):
        return x
    t = jnp.trunc(x)
    return jnp.where(jnp.abs(x - t) >= 0.5, t + jnp.sign(x), t)


@jax.custom_jvp
def erfc(z):
    """`conversions.special.erfc` of an f64 array (Cody's approximation: XLA's own f64 `erfc`
    is hundreds of ulps off below z = -10). Its derivative is `-2/√π exp(-z²)`: the formula
    selects among pieces whose unselected ones would give NaN gradients. Each `exp` is
    `rounded`: XLA's simplifier would merge the two factors of the split `exp(-z²)` into
    one `exp` of a rounded sum (1800 ulps at z = 25)."""
    return special.erfc(z, jnp.where, lambda v: rounded(jnp.exp(v)), jnp.floor)


erfc.defjvp(lambda primals, tangents: (erfc(primals[0]), tangents[0] * (-2 / np.sqrt(np.pi)) * jnp.exp(-jnp.square(primals[0]))))


def gelu(x):
    """Exact GELU `x Φ(x)`, `Φ(x) = erfc(-x / √2) / 2` (Hendrycks and Gimpel, 2016), in f64
    and rounded once, as the interpreter's: XLA's f32 `erfc` (and `jax.nn.gelu`) loses up to
    24 ulps in the negative tail (x ≈ -4.7), where `exp(-z²)` reads a rounded z². The
    division by √2 stays a division of a value XLA cannot fold: it would multiply by the
    constant 1/√2, one ulp off z, which erfc's tail magnifies 2z² times."""
    wide = x.astype(jnp.float64)
    root_two = jnp.where(jnp.isnan(wide), jnp.nan, np.sqrt(2.0))  # not a constant XLA could fold
    return convert(0.5 * wide * erfc(-wide / root_two), x.dtype)


GELU_C, GELU_K = np.sqrt(2.0 / np.pi), 0.044715


@jax.custom_jvp
def _gelu_approx64(w):
    return w / (1.0 + jnp.exp(-2.0 * (GELU_C * (w + GELU_K * (w * w * w)))))


@_gelu_approx64.defjvp
def _gelu_approx64_jvp(primals, tangents):
    """`s + 2x s (1 - s) u'`, `s = σ(2u)`, `1 - s = σ(-2u)` (the interpreter's derivative):
    JAX's derivative of the quotient overflows `exp(-2u)` to NaN below x = -27."""
    (w,), (dw,) = primals, tangents
    two_u = 2.0 * (GELU_C * (w + GELU_K * (w * w * w)))
    s = 1.0 / (1.0 + jnp.exp(-two_u))
    slope = s * (1.0 / (1.0 + jnp.exp(two_u)))
    full = s + 2.0 * w * slope * (GELU_C * (1.0 + 3.0 * GELU_K * (w * w)))
    return _gelu_approx64(w), dw * jnp.where(slope == 0, s, full)


def gelu_approx(x):
    """tanh-GELU as the interpreter computes it: `x / (1 + exp(-2u))`,
    `u = √(2/π) (x + 0.044715 x³)`, in f64 and rounded once (`1 + tanh(u)` cancels)."""
    return convert(_gelu_approx64(x.astype(jnp.float64)), x.dtype)


@jax.custom_jvp
def log1p64(x):
    """`conversions.special.log1p` of an f64 array; derivative 1 / (1 + x) (the formula's
    unselected pieces would give NaN gradients)."""
    return special.log1p(x, jnp.where, jnp.log, rounded)


@jax.custom_jvp
def expm1_64(x):
    """`conversions.special.expm1` of an f64 array; derivative exp(x)."""
    return special.expm1(x, jnp.where, jnp.exp, jnp.log, rounded)


log1p64.defjvp(lambda primals, tangents: (log1p64(primals[0]), tangents[0] / (1 + primals[0])))
expm1_64.defjvp(lambda primals, tangents: (expm1_64(primals[0]), tangents[0] * jnp.exp(primals[0])))


def _kahan(formula, fn):
    """`fn` for f32 and narrower (computed in f64 and rounded once), `formula` (a
    `conversions.special` one) for f64: XLA's f64 `log1p` is 120 ulps off near -0.41."""

    def computed(x):
        if x.dtype == jnp.float64:
            return formula(x)
        return fn(x.astype(jnp.float64)).astype(x.dtype)

    return computed


ACTIVATIONS = {
    Activation.RELU: jax.nn.relu, Activation.SIGMOID: jax.nn.sigmoid, Activation.SILU: jax.nn.silu,
    Activation.TANH: jnp.tanh, Activation.EXP: jnp.exp, Activation.LOG: jnp.log,
    Activation.NEG: _negative, Activation.SQRT: jnp.sqrt, Activation.RSQRT: jax.lax.rsqrt,
    Activation.GELU: gelu,
    Activation.GELU_APPROX: gelu_approx,
    Activation.SIN: jnp.sin, Activation.COS: jnp.cos, Activation.TAN: jnp.tan, Activation.ATAN: jnp.arctan,
    Activation.ABS: jnp.abs, Activation.ROUND: round_half_away,
    Activation.LOG1P: _kahan(log1p64, jnp.log1p), Activation.EXPM1: _kahan(expm1_64, jnp.expm1),
    Activation.ERF: jax.lax.erf,
}  # fmt: skip
"""Each activation kind's function (shared with the fused and backward ops)."""


IN_F64 = frozenset({Activation.GELU, Activation.GELU_APPROX})
"""The kinds computed in f64 and rounded once to the operand's dtype: an f16/bf16 operand
is not widened to f32 first (the f32 result, rounded again, would be one ulp off)."""


def activation(kind: Activation | None, x):
    """`kind` applied to `x` (the identity for None), f16/bf16 computed in f32 (or, for
    `IN_F64`, in f64), rounded once."""
    if kind is None:
        return x
    return ACTIVATIONS[Activation(kind)](x if Activation(kind) in IN_F64 else widen(x))


for _kind in Activation:
    JAX_OPS.add(ew.activation_op(_kind), one(ACTIVATIONS[_kind]))
