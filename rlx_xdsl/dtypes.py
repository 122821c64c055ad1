"""RLX's element types, their numpy twins, and the promotion rule.

Every pass and op that needs to reason about dtypes goes through this module, so
the table below is the single source of truth for which builtin element types
the compiler accepts and how mixed-dtype operands combine.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from xdsl.dialects.builtin import (
    ComplexType,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    IntegerType,
    Signedness,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import numpy as np

ui8 = IntegerType(8, Signedness.UNSIGNED)
ui16 = IntegerType(16, Signedness.UNSIGNED)
ui32 = IntegerType(32, Signedness.UNSIGNED)
ui64 = IntegerType(64, Signedness.UNSIGNED)
i2, ui2 = IntegerType(2), IntegerType(2, Signedness.UNSIGNED)
i4, ui4 = IntegerType(4), IntegerType(4, Signedness.UNSIGNED)
c64 = ComplexType(f32)


@dataclass(frozen=True)
class DType:
    """One RLX dtype: its builtin element type, numpy dtype and promotion data.

    numpy (and ml_dtypes, for bf16) are imported on first use of `numpy`, so
    tools that only parse, verify and print never load them.
    """

    name: str
    element_type: Attribute
    numpy_name: str
    """The numpy dtype's name; `bfloat16`, the 8- and 4-bit floats and the 2- and 4-bit
    integers come from ml_dtypes."""
    rank: int
    """RLX's promotion rank: a wider type has a higher rank."""
    kind: str
    """'bool', 'int', 'uint', 'float' or 'complex'."""
    precision_bits: int
    """Bits of exact integer precision (mantissa + 1 for floats, magnitude bits for ints)."""

    @property
    def numpy(self) -> np.dtype:
        return _numpy_dtype(self.numpy_name)

    @property
    def nbytes(self) -> int:
        """Bytes per element, from the element type alone (so numpy stays unloaded):
        whole bytes, i1 taking one as numpy's bool does."""
        t = self.element_type
        bits = 2 * t.element_type.bitwidth if isinstance(t, ComplexType) else t.bitwidth
        return -(-bits // 8)

    @property
    def is_float(self) -> bool:
        return self.kind == "float"

    @property
    def is_integer(self) -> bool:
        return self.kind in ("int", "uint", "bool")


DTYPES: tuple[DType, ...] = (
    DType("i1", i1, "bool", 0, "bool", 1),
    DType("i2", i2, "int2", 1, "int", 1),
    DType("ui2", ui2, "uint2", 1, "uint", 2),
    DType("i4", i4, "int4", 1, "int", 3),
    DType("ui4", ui4, "uint4", 1, "uint", 4),
    DType("ui8", ui8, "uint8", 1, "uint", 8),
    DType("i8", i8, "int8", 1, "int", 7),
    DType("f4E2M1FN", Float4E2M1FNType(), "float4_e2m1fn", 1, "float", 2),
    DType("f8E4M3FN", Float8E4M3FNType(), "float8_e4m3fn", 1, "float", 4),
    DType("f8E4M3FNUZ", Float8E4M3FNUZType(), "float8_e4m3fnuz", 1, "float", 4),
    DType("f8E5M2", Float8E5M2Type(), "float8_e5m2", 1, "float", 3),
    DType("f8E5M2FNUZ", Float8E5M2FNUZType(), "float8_e5m2fnuz", 1, "float", 3),
    DType("ui16", ui16, "uint16", 2, "uint", 16),
    DType("i16", i16, "int16", 2, "int", 15),
    DType("bf16", bf16, "bfloat16", 2, "float", 8),
    DType("f16", f16, "float16", 3, "float", 11),
    DType("ui32", ui32, "uint32", 4, "uint", 32),
    DType("i32", i32, "int32", 4, "int", 31),
    DType("ui64", ui64, "uint64", 5, "uint", 64),
    DType("i64", i64, "int64", 5, "int", 63),
    DType("f32", f32, "float32", 6, "float", 24),
    DType("f64", f64, "float64", 7, "float", 53),
    DType("complex<f32>", c64, "complex64", 8, "complex", 24),
)

INTERPRETER_ONLY = frozenset(("i2", "ui2", "i4", "ui4", "f4E2M1FN", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ"))
"""The narrow dtypes (ONNX's quantised storage types) only the interpreter computes: the
linalg and JAX lowerings refuse them with a located error (`interpreter_only_value`)."""

_BY_TYPE: dict[Attribute, DType] = {d.element_type: d for d in DTYPES}
_BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}


@cache
def _numpy_dtype(name: str) -> np.dtype:
    import numpy as np

    if hasattr(np, name):
        return np.dtype(name)
    import ml_dtypes  # bfloat16, the 8- and 4-bit floats, the 2- and 4-bit integers

    return np.dtype(getattr(ml_dtypes, name))


@cache
def _by_numpy() -> dict[np.dtype, DType]:
    return {d.numpy: d for d in DTYPES}
_FLOATS_BY_WIDTH = ("bf16", "f16", "f32", "f64")


class UnsupportedDTypeError(ValueError):
    """An element type (or numpy dtype, or name) outside RLX's dtypes."""


def is_supported(element_type: Attribute) -> bool:
    return element_type in _BY_TYPE


def dtype_of(element_type: Attribute) -> DType:
    """The RLX dtype of a builtin element type; `UnsupportedDTypeError` for other types."""
    try:
        return _BY_TYPE[element_type]
    except KeyError:
        raise UnsupportedDTypeError(f"unsupported element type {element_type}") from None


def interpreter_only_value(op) -> Attribute | None:
    """The first operand or result type of `op` over an `INTERPRETER_ONLY` dtype, if any."""
    for value in (*op.operands, *op.results):
        element = getattr(value.type, "element_type", None)
        d = _BY_TYPE.get(element) if element is not None else None
        if d is not None and d.name in INTERPRETER_ONLY:
            return value.type
    return None


def dtype_named(name: str) -> DType:
    try:
        return _BY_NAME[name]
    except KeyError:
        known = ", ".join(_BY_NAME)
        raise UnsupportedDTypeError(f"unknown dtype '{name}' (known: {known})") from None


def dtype_of_numpy(dt: np.dtype) -> DType:
    import numpy as np

    try:
        return _by_numpy()[np.dtype(dt)]
    except KeyError:
        raise UnsupportedDTypeError(f"numpy dtype {np.dtype(dt)} has no RLX dtype") from None


def numpy_dtype(element_type: Attribute) -> np.dtype:
    return dtype_of(element_type).numpy


def is_float(element_type: Attribute) -> bool:
    d = _BY_TYPE.get(element_type)
    return d is not None and d.is_float


def _widen_float_to_cover(flt: DType, bits: int) -> DType:
    """The narrowest float at least as wide as `flt` holding `bits` exactly (f64 at most)."""
    if flt.precision_bits >= bits:
        return flt
    for name in ("f16", "f32", "f64"):
        cand = _BY_NAME[name]
        if cand.rank > flt.rank and cand.precision_bits >= bits:
            return cand
    return _BY_NAME["f64"]


def promote(a: Attribute, b: Attribute) -> Attribute:
    """RLX's binary dtype promotion, on builtin element types.

    * equal types are kept;
    * complex wins over everything;
    * of two floats, the one holding the other exactly, else the narrowest float
      holding both (f16 with bf16 gives f32, two different 8-bit floats bf16);
    * an integer with a float gives the smallest float, no narrower than the
      float operand, that holds every integer value exactly (i64 gives f64);
    * of two integers, the one holding the other's values, else the narrowest
      signed type holding both (ui8+i8 -> i16, ui32+i32 -> i64); ui64 with a
      signed type gives f64, as in numpy and JAX.
    """
    if a == b:
        return a
    da, db = dtype_of(a), dtype_of(b)
    if "complex" in (da.kind, db.kind):
        return c64
    if da.is_float and db.is_float:
        return _narrowest_holding(a, b, lambda d: d.is_float)
    if da.is_float or db.is_float:
        flt, integer = (da, db) if da.is_float else (db, da)
        return _widen_float_to_cover(flt, integer.precision_bits).element_type
    if da.kind == "bool":
        return b
    if db.kind == "bool":
        return a
    return _narrowest_holding(a, b, lambda d: d.kind == "int", f64)


def _narrowest_holding(a: Attribute, b: Attribute, among, otherwise: Attribute = f64) -> Attribute:
    """`a` or `b` where it holds the other exactly, else the first dtype of the table
    (the narrowest) passing `among` that holds both, else `otherwise`."""
    if converts_exactly(b, a):
        return a
    if converts_exactly(a, b):
        return b
    for d in DTYPES:
        if among(d) and converts_exactly(a, d.element_type) and converts_exactly(b, d.element_type):
            return d.element_type
    return otherwise


def _value_range(d: DType) -> tuple[int, int]:
    """The integers an integer or bool dtype holds, as `(lowest, highest)`."""
    import ml_dtypes

    if d.kind == "bool":
        return 0, 1
    info = ml_dtypes.iinfo(d.numpy)  # numpy's iinfo, and int4 and the like
    return int(info.min), int(info.max)


def converts_exactly(source: Attribute, target: Attribute) -> bool:
    """Every value of element type `source` is also a value of `target`.

    Then a cast from `source` to `target` loses nothing, and casting back gives
    the original bits (NaN, infinities, -0.0 and subnormals included). Floats
    need at least the mantissa bits and the exponent range (subnormals
    included) of the source, so f16 and bf16 convert exactly only to f32 and
    f64, not to each other; integers need the whole range; an integer goes to a
    float that holds all its magnitude bits. Nothing converts exactly to an
    integer from a float, and complex numbers only to themselves.
    """
    if source == target:
        return True
    s, t = dtype_of(source), dtype_of(target)
    if "complex" in (s.kind, t.kind):
        return False
    if s.is_float:
        if not t.is_float:
            return False
        import ml_dtypes  # its finfo also describes bfloat16

        fs, ft = ml_dtypes.finfo(s.numpy), ml_dtypes.finfo(t.numpy)
        return (
            ft.nmant >= fs.nmant
            and ft.maxexp >= fs.maxexp
            and ft.minexp - ft.nmant <= fs.minexp - fs.nmant
            and all(has_t or not has_s for has_s, has_t in zip(_specials(s.name), _specials(t.name)))
        )
    if t.is_float:
        return s.precision_bits <= t.precision_bits
    (s_low, s_high), (t_low, t_high) = _value_range(s), _value_range(t)
    return t_low <= s_low and s_high <= t_high


@cache
def _specials(name: str) -> tuple[bool, bool, bool]:
    """Whether float dtype `name` has infinities, -0.0 and NaN (the 8-bit `FN` floats have no
    infinities, the `FNUZ` ones no -0.0 either, f4E2M1FN none of the three)."""
    import numpy as np

    with np.errstate(all="ignore"):
        back = np.array([np.inf, -0.0, np.nan], np.float32).astype(_BY_NAME[name].numpy).astype(np.float32)
    return bool(np.isinf(back[0])), bool(np.signbit(back[1])), bool(np.isnan(back[2]))


def literal_range(element_type: IntegerType) -> tuple[int, int]:
    """The integer literals a type accepts, `[low, high]`: signless `iN` takes
    `[-2^(N-1), 2^N - 1]` (MLIR: the bits of either reading), `siN` the signed range,
    `uiN` `[0, 2^N - 1]`, `i1` 0 and 1."""
    bits = element_type.width.data
    if bits == 1:
        return 0, 1
    if element_type.signedness.data == Signedness.UNSIGNED:
        return 0, (1 << bits) - 1
    if element_type.signedness.data == Signedness.SIGNED:
        return -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    return -(1 << (bits - 1)), (1 << bits) - 1


def promote_all(*types: Attribute) -> Attribute:
    result = types[0]
    for t in types[1:]:
        result = promote(result, t)
    return result
