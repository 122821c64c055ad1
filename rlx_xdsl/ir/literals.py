"""Exact numeric literals: text -> the value of an element type, rounded once.

MLIR reads a literal straight into its type: `1.0039062500000001 : bf16` rounds
the decimal once, `0x7FC00000 : f32` is a bit pattern (NaN), and a literal the
type cannot hold is an error. These functions implement that for RLX's dtypes;
the parser (`rlx_xdsl.ir.parser`) calls them with each literal's token text and
reports a `LiteralError` at the literal. (The parser imports this module, and so
numpy, only when a literal needs it.)
"""

from __future__ import annotations

import re
from fractions import Fraction

import numpy as np
from xdsl.dialects.builtin import ComplexType
from xdsl.ir import Attribute

from rlx_xdsl import dtypes
from rlx_xdsl.ir.lexer import is_hex_literal
from rlx_xdsl.numerics import BF16, F16, F32, F64, convert

_FORMATS = {F16: (11, -14, 15), BF16: (8, -126, 127), F32: (24, -126, 127), F64: (53, -1022, 1023)}
"""Float dtypes: (precision bits, minimum normal exponent, maximum exponent)."""

_UINT_OF_SIZE = {2: np.uint16, 4: np.uint32, 8: np.uint64}


class LiteralError(ValueError):
    """A literal the element type cannot represent (the message says why); `index`
    is its position in the list of literals converted together."""

    def __init__(self, message: str, index: int = 0):
        super().__init__(message)
        self.index = index


def float_bits(text: str, dtype: np.dtype, type_name: str) -> np.ndarray:
    """A hexadecimal literal read as the bit pattern of a float (MLIR's rule)."""
    if text.startswith("-"):
        raise LiteralError(f"hexadecimal float literal {text} cannot be negative (write the sign bit)")
    value = int(text, 16)
    bits = dtype.itemsize * 8
    if value >= 1 << bits:
        raise LiteralError(f"hexadecimal literal {text} does not fit the {bits} bits of {type_name}")
    return np.array([value], _UINT_OF_SIZE[dtype.itemsize]).view(dtype)


def round_rational(value: Fraction, dtype: np.dtype) -> float:
    """`value` rounded to nearest-even in float `dtype`, as a Python float (or ±inf)."""
    precision, emin, emax = _FORMATS[np.dtype(dtype)]
    if value == 0:
        return 0.0
    magnitude = abs(value)
    exponent = magnitude.numerator.bit_length() - magnitude.denominator.bit_length()
    if Fraction(2) ** exponent > magnitude:
        exponent -= 1
    exponent = max(exponent, emin)  # subnormals share the smallest exponent
    ulp = Fraction(2) ** (exponent - precision + 1)
    units, rest = divmod(magnitude / ulp, 1)
    if rest > Fraction(1, 2) or (rest == Fraction(1, 2) and units % 2 == 1):
        units += 1
    result = float(units * ulp) if exponent <= emax and units * ulp < Fraction(2) ** (emax + 1) else float("inf")
    return -result if value < 0 else result


def decimal_floats(texts: list[str], values: list[float], dtype: np.dtype, type_name: str) -> np.ndarray:
    """Decimal literals (`texts`, already read as f64 `values`) rounded once to `dtype`.

    Rounding the f64 value again gives the right answer except where that value
    is exactly halfway between two `dtype` values (or on the overflow threshold):
    only there is the decimal text itself compared with the midpoint.
    """
    wide = np.array(values, F64)
    result = convert(wide, dtype)
    if dtype != F64:
        for i in np.flatnonzero(_ambiguous(wide, result, dtype)):
            exact = round_rational(Fraction(texts[i]), dtype)
            result[i] = convert(np.array([exact], F64), dtype)[0]
    # MLIR has no literal spelling of infinity (hex bit patterns aside), so any
    # infinity here is a literal too large for the type.
    overflow = np.isinf(result.astype(F64))
    if overflow.any():
        i = int(np.flatnonzero(overflow)[0])
        raise LiteralError(f"float literal {texts[i]} is out of range for {type_name}", i)
    return result


def as_f64(value: int | float) -> float:
    """A literal's value as f64 (correctly rounded); integers too large give inf."""
    try:
        return float(value)
    except OverflowError:
        return float("inf") if value > 0 else float("-inf")


def _ambiguous(wide: np.ndarray, rounded: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Where `wide` (f64) is a midpoint of `dtype`, or rounding it overflowed."""
    back = rounded.astype(F64)
    inexact = (back != wide) & np.isfinite(wide)
    if not inexact.any():
        return inexact
    # The other neighbour of `wide` in `dtype`; a midpoint is their exact average.
    up = back < wide
    with np.errstate(all="ignore"):  # neighbours of the largest value overflow to inf
        if dtype == BF16:
            other = _bf16_neighbour(rounded, up).astype(F64)
        else:
            other = np.nextafter(rounded, np.where(up, np.inf, -np.inf).astype(dtype)).astype(F64)
        midpoint = (back + other) / 2 == wide
    return inexact & (midpoint | np.isinf(back))


def _bf16_neighbour(x: np.ndarray, up: np.ndarray) -> np.ndarray:
    """The next bf16 value above (`up`) or below each element."""
    bits = x.view(np.uint16).astype(np.int32)
    negative = (bits & 0x8000) != 0
    away = up != negative  # moving away from zero grows the magnitude bits
    magnitude = bits & 0x7FFF
    magnitude = np.where(away, magnitude + 1, magnitude - 1)
    # Below +0 lies the smallest negative subnormal, above -0 the smallest positive one.
    crossing = magnitude < 0
    sign = np.where(crossing, ~bits & 0x8000, bits & 0x8000)
    magnitude = np.where(crossing, 1, magnitude)
    return ((sign | magnitude).astype(np.uint16)).view(BF16)


def check_integer(value: int, text: str, element_type) -> None:
    """A `LiteralError` unless `value` is a literal of integer type `element_type`."""
    low, high = dtypes.literal_range(element_type)
    if not low <= value <= high:
        raise LiteralError(f"integer literal {text} is out of range for {element_type} [{low}, {high}]")


def integers(values: list[int], texts: list[str], element_type) -> np.ndarray:
    """Integer literals as an array of `element_type` (signless values above the signed
    maximum wrap, as in MLIR); out-of-range literals are a `LiteralError`."""
    for i, (value, text) in enumerate(zip(values, texts)):
        try:
            check_integer(value, text, element_type)
        except LiteralError as e:
            raise LiteralError(str(e), i) from None
    dt = dtypes.numpy_dtype(element_type)
    if dt.kind == "b":
        return np.array(values, np.int64) != 0
    bits = dt.itemsize * 8
    wrapped = [v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v for v in values]
    return np.array(wrapped, dt)


# Tensor literals -------------------------------------------------------------------------


def literal_text(text: str) -> str:
    """A literal's source text without the blanks MLIR allows after its sign."""
    return "".join(text.split())


def number(text: str) -> int | float:
    try:
        return int(text) if re.fullmatch(r"[-+]?[0-9]+", text) else float(text)
    except ValueError:
        raise LiteralError(f"malformed number literal '{text}'") from None


def complex_parts(text: str) -> list[str]:
    """`(1.0, 0x7FC00000)` -> `["1.0", "0x7FC00000"]`."""
    return [part.strip() for part in text.strip()[1:-1].split(",")]


def float_values(texts: list[str], element_type: Attribute) -> np.ndarray:
    """Float literals (decimal or hex bit patterns) as an array of `element_type`; a
    `LiteralError`'s `index` says which literal is wrong."""
    dt = dtypes.numpy_dtype(element_type)
    result = np.zeros(len(texts), dt)
    decimal = [i for i, t in enumerate(texts) if not is_hex_literal(t)]
    for i, text in enumerate(texts):
        if is_hex_literal(text):
            try:
                result[i] = float_bits(text, dt, str(element_type))[0]
            except LiteralError as e:
                raise LiteralError(str(e), i) from None
    values = []
    for i in decimal:
        try:
            values.append(as_f64(number(texts[i])))
        except LiteralError as e:
            raise LiteralError(str(e), i) from None
    try:
        result[decimal] = decimal_floats([texts[i] for i in decimal], values, dt, str(element_type))
    except LiteralError as e:
        raise LiteralError(str(e), decimal[e.index]) from None
    return result


def element_values(element_type: Attribute, values: list, texts: list[str]) -> np.ndarray:
    """A tensor literal's elements (their parsed `values` and source `texts`) as an
    array of `element_type`, exactly; a `LiteralError`'s `index` says which is wrong."""
    texts = [literal_text(t) for t in texts]
    if isinstance(element_type, ComplexType):
        for i, (value, text) in enumerate(zip(values, texts)):
            if not isinstance(value, tuple):
                raise LiteralError(
                    f"real literal {text} for complex type {element_type}: "
                    f"write a complex value as (real, imag), e.g. ({text}, 0.0)",
                    i,
                )
        parts = [p for text in texts for p in complex_parts(text)]
        try:
            real = float_values(parts, element_type.element_type)
        except LiteralError as e:
            raise LiteralError(str(e), e.index // 2) from None
        return real.astype(np.float64).view(np.complex128).astype(np.complex64)
    kind = dtypes.dtype_of(element_type).kind
    for i, (value, text) in enumerate(zip(values, texts)):
        if isinstance(value, tuple):
            raise LiteralError(f"complex literal {text} for non-complex type {element_type}", i)
        if isinstance(value, bool) and kind != "bool":
            raise LiteralError(f"boolean literal {text} for type {element_type}", i)
        if isinstance(value, float) and kind != "float":
            raise LiteralError(f"float literal {text} for integer type {element_type}", i)
    if kind == "float":
        return float_values(texts, element_type)
    return integers([int(v) for v in values], texts, element_type)


def element_bytes(values: np.ndarray, count: int) -> bytes:
    """Raw little-endian bytes of `values` in xDSL's layout (i1: one byte, true = 0xFF),
    for an attribute of `count` elements (a single value is a splat, stored once)."""
    if count == 0:
        values = values[:0]
    if values.dtype.kind == "b":
        return np.where(values, np.int8(-1), np.int8(0)).tobytes()
    return np.ascontiguousarray(values.astype(values.dtype.newbyteorder("<"), copy=False)).tobytes()


def empty(element_type: Attribute) -> np.ndarray:
    return np.zeros((0,), dtypes.numpy_dtype(element_type))
