"""Elementwise arithmetic, comparisons, logic, casts (numpy-style broadcasting, as MIR's)."""

from __future__ import annotations

from functools import reduce

import ml_dtypes
import numpy as np

from rlx_xdsl.dtypes import dtype_named
from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.importers.onnx.types import dtype_name

_BINARY = {"Add": "add", "Sub": "sub", "Mul": "mul", "Div": "div", "Pow": "pow"}
_VARIADIC = {"Max": "max", "Min": "min", "Sum": "add"}
_UNARY = {
    "Neg": "neg",
    "Abs": "abs",
    "Exp": "exp",
    "Log": "log",
    "Sqrt": "sqrt",
    "Sin": "sin",
    "Cos": "cos",
    "Tan": "tan",
    "Atan": "atan",
    "Erf": "erf",
}
_COMPARE = {
    "Equal": "eq",
    "Less": "lt",
    "LessOrEqual": "le",
    "Greater": "gt",
    "GreaterOrEqual": "ge",
}


def _binary(op: str):
    def translate(t, node):
        lhs = t.value(0)
        if op == "pow":  # Pow's result has the base's type
            return t.e.mir.pow(lhs, t.value(1, t.dtype(lhs)))
        return getattr(t.e.mir, op)(lhs, t.value(1))

    return translate


def _variadic(op: str):
    def translate(t, node):
        return reduce(getattr(t.e.mir, op), [t.value(i) for i in range(len(node.input))])

    return translate


def _unary(op: str):
    def translate(t, node):
        return getattr(t.e.mir, op)(t.value(0))

    return translate


def _compare(predicate: str):
    def translate(t, node):
        return t.e.mir.compare(t.value(0), t.value(1), predicate)

    return translate


for _type, _op in _BINARY.items():
    rule(_type)(_binary(_op))
for _type, _op in _VARIADIC.items():
    rule(_type)(_variadic(_op))
for _type, _op in _UNARY.items():
    rule(_type)(_unary(_op))
for _type, _predicate in _COMPARE.items():
    rule(_type)(_compare(_predicate))


@rule("Reciprocal")
def reciprocal(t, node):
    x = t.value(0)
    return t.e.mir.div(t.constant(1, t.dtype(x)), x)


@rule("Not")
def not_(t, node):
    return t.e.mir.compare(t.value(0), t.constant(False, "i1"), "eq")


@rule("And", "Or", "Xor")
def logic(t, node):
    a, b = t.value(0, "i1"), t.value(1, "i1")
    if node.op_type == "And":
        return t.e.mir.compare(t.e.mir.mul(a, b), t.constant(True, "i1"), "eq")
    if node.op_type == "Or":
        return t.e.mir.compare(t.e.mir.max(a, b), t.constant(True, "i1"), "eq")
    return t.e.mir.compare(a, b, "ne")


@rule("Where")
def where(t, node):
    return t.e.mir.where(t.value(0), t.value(1), t.value(2))


@rule("Cast")
def cast(t, node):
    return cast_as_onnx(t, t.value(0), dtype_name(t.attr("to"), t.where))


@rule("CastLike")
def cast_like(t, node):
    return cast_as_onnx(t, t.value(0), t.dtype(t.value(1)))


SATURATING = ("f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ")
"""The element types ONNX's `saturate` attribute (of Cast, CastLike, QuantizeLinear) acts on."""
_NARROW_INTS = ("i2", "ui2", "i4", "ui4")


def cast_as_onnx(t, x, to: str):
    """ONNX Cast (CastLike, QuantizeLinear to a float) to `to`, as its reference computes
    it (`x.astype`, `saturate_cast`).

    * To an 8-bit float with `saturate` (the default), a value beyond the type's largest
      finite one (infinities included) becomes that value with its sign; NaN stays NaN.
      Without it, MIR's rounding (out of range: inf, or NaN where the type has none).
    * From a float to a 2- or 4-bit integer, the value's integer part wraps (ONNX's -9 to
      int4 is 7): through i64, where MIR's float-to-integer cast would saturate.
    """
    source = dtype_named(t.dtype(x))
    if to in SATURATING and t.attr("saturate", 1):
        if not source.is_float:
            x = t.e.mir.cast(x, "f64")  # exact for every value up to the type's largest
            source = dtype_named("f64")
        largest = float(ml_dtypes.finfo(dtype_named(to).numpy).max)
        x = t.e.mir.max(x, t.constant(-largest, source.name))
        x = t.e.mir.min(x, t.constant(largest, source.name))
    elif to in _NARROW_INTS and source.is_float:
        x = t.e.mir.cast(x, "i64")
    return t.e.mir.cast(x, to)


@rule("Identity")
def identity(t, node):
    return t.value(0)


@rule("Round")
def round_(t, node):
    x = t.value(0)
    return common.round_half_even(t.e, x, t.dtype(x))


@rule("IsNaN")
def is_nan(t, node):
    x = t.value(0)
    return t.e.mir.compare(x, x, "ne")


@rule("IsInf")
def is_inf(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    found = None
    for attribute, value in (("detect_positive", float("inf")), ("detect_negative", float("-inf"))):
        if t.attr(attribute, 1):
            hit = t.e.mir.compare(x, t.constant(value, dtype), "eq")
            found = hit if found is None else t.e.mir.compare(t.e.mir.max(found, hit), t.constant(True, "i1"), "eq")
    if found is None:  # detects nothing: all false
        return t.e.mir.expand(t.constant(False, "i1"), target_shape=t.shape(x))
    return found


@rule("Sign")
def sign(t, node):
    x = t.value(0)
    return common.sign(t.e, x, t.dtype(x))


@rule("Floor", "Ceil")
def floor_ceil(t, node):
    x = t.value(0)
    return (common.floor if node.op_type == "Floor" else common.ceil)(t.e, x, t.dtype(x))


@rule("Mod")
def mod(t, node):
    """`fmod = 1`: C's fmod (`common.fmod`: `a - b * trunc(a / b)`, floats in f64).
    `fmod = 0`: that remainder moved by `b` where its sign differs from `b`'s (Python's %,
    `numpy.mod`); a float zero remainder takes `b`'s sign (`0.0 % -2.0` is `-0.0`)."""
    a, b = t.value(0), t.value(1)
    dtype = t.dtype(a)
    e = t.e.mir
    rest = common.fmod(t.e, a, b, dtype)
    if t.attr("fmod", 0):
        return common.zero_signed_as(t.e, rest, a, dtype)
    zero = t.constant(0, dtype)
    b_negative = e.compare(b, zero, "lt")
    differs = e.compare(e.compare(rest, zero, "lt"), b_negative, "ne")
    is_zero = e.compare(rest, zero, "eq")
    move = e.where(is_zero, t.constant(False, "i1"), differs)
    moved = e.where(move, e.add(rest, b), rest)
    if not dtype_named(dtype).is_float:
        return moved
    return e.where(is_zero, e.where(b_negative, t.constant(-0.0, dtype), zero), moved)


@rule("BitShift")
def bit_shift(t, node):
    """ONNX's reference: `LEFT` is `x * 2**y` wrapping (the bits of the unsigned shift),
    `RIGHT` the floor of `x / 2**y` (arithmetic for signed `x`); a shift outside
    `[0, width)` gives 0 (`RIGHT` of a negative `x`: -1). `2**y` is a gather from the
    table of the `width` powers (the top one wraps to the minimum of a signed type)."""
    x, y = t.value(0), t.value(1)
    dtype = t.dtype(x)
    info = dtype_named(dtype)
    if info.is_float:
        raise t.fail(f"BitShift of {dtype} is not supported")
    e = t.e.mir
    width = info.numpy.itemsize * 8
    signed = info.kind == "int"
    right = t.attr("direction", b"LEFT") in (b"RIGHT", "RIGHT")
    top = width - 1 if right and signed else width  # a signed RIGHT shift by width - 1 is the sign
    zero = t.constant(0, dtype)
    valid = e.where(e.compare(y, t.constant(0, t.dtype(y)), "ge"),
                    e.compare(y, t.constant(top, t.dtype(y)), "lt"), t.constant(False, "i1"))  # fmt: skip
    index = e.where(valid, e.cast(y, "i64"), t.constant(0, "i64"))
    powers = t.constant(np.array([1 << k for k in range(width)], dtype=np.uint64).astype(info.numpy), dtype)
    power = e.gather(powers, index, axis=0)
    if not right:
        return e.where(valid, e.mul(x, power), zero)
    quotient = e.div(x, power)  # truncated: one less where a negative x leaves a remainder
    if signed:
        inexact = e.compare(e.mul(quotient, power), x, "ne")
        step = e.where(e.compare(x, zero, "lt"), inexact, t.constant(False, "i1"))
        quotient = e.where(step, e.sub(quotient, t.constant(1, dtype)), quotient)
        outside = e.where(e.compare(x, zero, "lt"), t.constant(-1, dtype), zero)
        return e.where(valid, quotient, outside)
    return e.where(valid, quotient, zero)


@rule("Sinh", "Cosh")
def sinh_cosh(t, node):
    """`(exp(x) -+ exp(-x)) / 2`."""
    x = t.value(0)
    e = t.e.mir
    up, down = e.exp(x), e.exp(e.neg(x))
    both = e.sub(up, down) if node.op_type == "Sinh" else e.add(up, down)
    return e.mul(both, t.constant(0.5, t.dtype(x)))


@rule("Asinh", "Acosh")
def asinh_acosh(t, node):
    """asinh: `sign(x) * log(|x| + sqrt(x^2 + 1))` (odd, so no cancellation for x < 0);
    acosh: `log(x + sqrt(x^2 - 1))`."""
    x = t.value(0)
    dtype = t.dtype(x)
    e = t.e.mir
    one = t.constant(1, dtype)
    if node.op_type == "Acosh":
        return e.log(e.add(x, e.sqrt(e.sub(e.mul(x, x), one))))
    magnitude = e.abs(x)
    result = e.log(e.add(magnitude, e.sqrt(e.add(e.mul(x, x), one))))
    return e.where(e.compare(x, t.constant(0, dtype), "lt"), e.neg(result), result)


@rule("Atanh")
def atanh(t, node):
    """`log1p(2x / (1 - x)) / 2`."""
    x = t.value(0)
    dtype = t.dtype(x)
    e = t.e.mir
    ratio = e.div(e.add(x, x), e.sub(t.constant(1, dtype), x))
    return e.mul(e.log1p(ratio), t.constant(0.5, dtype))


@rule("Asin", "Acos")
def asin_acos(t, node):
    """asin: `atan(x / sqrt(1 - x^2))` (±pi/2 at ±1); acos: `pi/2 - asin(x)`."""
    x = t.value(0)
    dtype = t.dtype(x)
    e = t.e.mir
    asin = e.atan(e.div(x, e.sqrt(e.sub(t.constant(1, dtype), e.mul(x, x)))))
    return asin if node.op_type == "Asin" else e.sub(t.constant(np.pi / 2, dtype), asin)


@rule("Mean")
def mean(t, node):
    """The elementwise sum of the (broadcast) inputs over their count."""
    total = reduce(t.e.mir.add, [t.value(i) for i in range(len(node.input))])
    return t.e.mir.div(total, t.constant(len(node.input), t.dtype(total)))
