"""Exact numeric literals: text -> the value of an element type, rounded once.

MLIR reads a literal straight into its type: `1.0039062500000001 : bf16` rounds
the decimal once, `0x7FC00000 : f32` is a bit pattern (NaN), and a literal the
type cannot hold is an error. These functions implement that for RLX's dtypes;
the parser (`rlx_xdsl.parser`) calls them with each literal's token text and
reports a `LiteralError` at the literal.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

from rlx_xdsl import dtypes
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


def is_hex(text: str) -> bool:
    return text.lstrip("-+").lower().startswith("0x")


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


def integer_range(element_type) -> tuple[int, int]:
    """The literals an integer type accepts, `[low, high]`: signless `iN` takes
    `[-2^(N-1), 2^N - 1]` (MLIR: the bits of either reading), `uiN` `[0, 2^N - 1]`."""
    dt = dtypes.dtype_of(element_type)
    bits = dt.numpy.itemsize * 8 if dt.kind != "bool" else 1
    if dt.kind == "bool":
        return 0, 1
    if dt.kind == "uint":
        return 0, (1 << bits) - 1
    return -(1 << (bits - 1)), (1 << bits) - 1


def integers(values: list[int], texts: list[str], element_type) -> np.ndarray:
    """Integer literals as an array of `element_type` (signless values above the signed
    maximum wrap, as in MLIR); out-of-range literals are a `LiteralError`."""
    low, high = integer_range(element_type)
    for i, (value, text) in enumerate(zip(values, texts)):
        if not low <= value <= high:
            raise LiteralError(f"integer literal {text} is out of range for {element_type} [{low}, {high}]", i)
    dt = dtypes.numpy_dtype(element_type)
    if dt.kind == "b":
        return np.array(values, np.int64) != 0
    bits = dt.itemsize * 8
    wrapped = [v - (1 << bits) if dt.kind == "i" and v >= 1 << (bits - 1) else v for v in values]
    return np.array(wrapped, dt)
