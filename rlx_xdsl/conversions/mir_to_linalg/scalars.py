"""Scalar arithmetic in `linalg.generic` bodies, chosen by RLX dtype.

`arith` and `math` work on signless types, so which op computes a MIR
operation depends on the RLX dtype of its operands: `mir.div` is `arith.divf`
on floats, `arith.divsi` on signed and `arith.divui` on unsigned integers, and
`arith.ori`... on i1 (where numpy's `+` is a logical or). `Scalars` makes that
choice in one place; the lowering rules only say *what* to compute.

Unsigned dtypes are stored in the signless type of their width (`ui8` is `i8`,
`ui32` is `i32`), as MLIR does; only the ops reading them differ. complex<f32>
stays complex<f32> and computes with the upstream `complex` dialect (add, sub,
mul, div, neg, abs, conj, constants, casts as numpy's); any other operation on it is
refused (`UnsupportedDType`), so a lowering never emits `arith` on complex.
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith, math
from xdsl.dialects import complex as cx
from xdsl.dialects.builtin import (
    ArrayAttr,
    ComplexType,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    i1,
    i64,
)
from xdsl.dialects.linalg.ops import IndexOp
from xdsl.ir import Attribute, Operation, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.emitter import Emitter

F32 = dtypes.dtype_named("f32")
I64 = dtypes.dtype_named("i64")
F64 = dtypes.dtype_named("f64")
BOOL = dtypes.dtype_named("i1")

_FLOAT_ORDER = {"bf16": 0, "f16": 1, "f32": 2, "f64": 3}
_FLOAT_BITS = {"bf16": 16, "f16": 16, "f32": 32, "f64": 64}
_HALF = ("bf16", "f16")


def lowest_value(dt: DType) -> float | int:
    """The identity of max: -inf, the smallest integer, or false."""
    if dt.is_float:
        return float("-inf")
    if dt.kind in ("uint", "bool"):
        return 0
    return -(1 << (dt.nbytes * 8 - 1))


def highest_value(dt: DType) -> float | int:
    """The identity of min: inf, the largest integer, or true."""
    if dt.is_float:
        return float("inf")
    if dt.kind == "bool":
        return 1
    if dt.kind == "uint":
        return (1 << (dt.nbytes * 8)) - 1
    return (1 << (dt.nbytes * 8 - 1)) - 1


class UnsupportedDType(Exception):
    """An operation the upstream dialects cannot compute on a dtype (e.g. max of complex<f32>)."""


def refuse_complex(dt: DType, what: str) -> None:
    """Raise `UnsupportedDType` if `dt` is complex: `what` has no complex lowering."""
    if dt.kind == "complex":
        raise UnsupportedDType(f"{what} of element type {dt.element_type} has no lowering to linalg")


def storage_type(dt: DType) -> Attribute:
    """The element type holding `dt` in upstream MLIR: signless for unsigned ints."""
    if dt.kind == "uint":
        return IntegerType(dt.nbytes * 8)
    return dt.element_type


def accumulator(dt: DType) -> DType:
    """The dtype sums over `dt` accumulate in: f32 for f16/bf16 (as the interpreter does)."""
    return F32 if dt.name in ("f16", "bf16") else dt


def _width(dt: DType) -> int:
    return _FLOAT_BITS[dt.name] if dt.is_float else (1 if dt.kind == "bool" else dt.nbytes * 8)


_CMPF = {"eq": "oeq", "ne": "une", "lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge"}
"""numpy's float comparisons: false on NaN, except `!=`, which is true."""
_CMPI_SIGNED = {"eq": "eq", "ne": "ne", "lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge"}
_CMPI_UNSIGNED = {"eq": "eq", "ne": "ne", "lt": "ult", "le": "ule", "gt": "ugt", "ge": "uge"}


class Scalars:
    """Emits scalar `arith`/`math` ops through an emitter (usually at the end of a body block)."""

    def __init__(self, emitter: Emitter):
        self.e = emitter

    def emit(self, op: Operation) -> SSAValue:
        self.e.insert(op)
        return op.results[0]

    # Constants and indices ----------------------------------------------------------

    def constant(self, value: float | int | bool, dt: DType) -> SSAValue:
        """`value` as a scalar of `dt` (floats may be inf; complex takes a Python complex)."""
        if dt.kind == "complex":
            z = complex(value)
            part = dt.element_type.element_type
            parts = ArrayAttr([FloatAttr(z.real, part), FloatAttr(z.imag, part)])
            return self.emit(cx.ConstantOp(parts, dt.element_type))
        return self.emit(arith.ConstantOp(self.constant_attr(value, dt)))

    @staticmethod
    def constant_attr(value: float | int | bool, dt: DType) -> FloatAttr | IntegerAttr:
        refuse_complex(dt, "a scalar attribute")
        t = storage_type(dt)
        if dt.is_float:
            return FloatAttr(float(value), t)
        if dt.kind == "bool":
            return IntegerAttr(int(bool(value)), i1)
        width = dt.nbytes * 8
        raw = int(value) % (1 << width)  # two's complement bits of unsigned and negative values
        signed = raw - (1 << width) if raw >= 1 << (width - 1) else raw
        return IntegerAttr(signed, t)

    def index_constant(self, n: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(n, IndexType())))

    def loop_index(self, dim: int) -> SSAValue:
        """`linalg.index dim`: the current iteration's position along loop `dim`."""
        return self.emit(IndexOp(dim))

    # Conversions ------------------------------------------------------------------

    def cast(self, x: SSAValue, src: DType, dst: DType) -> SSAValue:
        """Convert `x` as numpy's `astype` (floats truncate toward zero into integers,
        anything nonzero is true)."""
        if src == dst:
            return x
        if dst.kind == "complex":  # numpy: x + 0j
            part = dtypes.dtype_of(dst.element_type.element_type)
            real = self.cast(x, src, part)
            return self.emit(cx.CreateOp(real, self.constant(0, part), dst.element_type))
        if src.kind == "complex":  # numpy: nonzero for bool, else the real part converted
            part = dtypes.dtype_of(src.element_type.element_type)
            re = self.real_part(x)
            if dst.kind != "bool":
                return self.cast(re, part, dst)
            return self.emit(arith.OrIOp(self.is_true(re, part), self.is_true(self.imag_part(x), part)))
        if dst.kind == "bool":
            return self.is_true(x, src)
        target = storage_type(dst)
        if src.is_float and dst.is_float:
            if {src.name, dst.name} == {"f16", "bf16"}:
                return self.cast(self.cast(x, src, F32), F32, dst)
            if src.name == "f64" and dst.name in _HALF:
                return self.cast(self._round_to_odd_f32(x), F32, dst)
            wider = _FLOAT_ORDER[dst.name] > _FLOAT_ORDER[src.name]
            return self.emit(arith.ExtFOp(x, target) if wider else arith.TruncFOp(x, target))
        if dst.is_float:
            if dst.name in _HALF and _width(src) >= 32:
                return self.cast(self._int_to_f64(x, src), F64, dst)
            signed = src.kind == "int"
            return self.emit(arith.SIToFPOp(x, target) if signed else arith.UIToFPOp(x, target))
        if src.is_float:
            return self._float_to_int(x, src, dst)
        src_bits, dst_bits = _width(src), _width(dst)
        if dst_bits == src_bits:
            return x  # same storage, other signedness
        if dst_bits < src_bits:
            return self.emit(arith.TruncIOp(x, target))
        extend = arith.ExtSIOp if src.kind == "int" else arith.ExtUIOp
        return self.emit(extend(x, target))

    def _round_to_odd_f32(self, x: SSAValue) -> SSAValue:
        """f64 `x` rounded to f32 to odd: truncated toward zero, with the last bit set when
        inexact. Rounding that again to bf16/f16 (fewer than 22 bits) equals rounding `x`
        once to nearest-even (Boldo & Melquiond, "Emulation of FMA and correctly rounded
        sums: proved algorithms using rounding to odd", 2008); a plain f64 -> f32 -> bf16
        rounds twice (one ulp low on ties made by the first rounding)."""
        i32 = IntegerType(32)
        nearest = self.emit(arith.TruncFOp(x, F32.element_type))
        back = self.emit(arith.ExtFOp(nearest, F64.element_type))
        inexact = self.emit(arith.CmpfOp(back, x, "one"))  # false on NaN and on exact values
        bits = self.emit(arith.BitcastOp(nearest, i32))
        even = self.emit(arith.CmpiOp(self.emit(arith.AndIOp(bits, self._int(1, i32))), self._int(0, i32), "eq"))
        away = self.emit(arith.CmpfOp(self.emit(math.AbsFOp(back)), self.emit(math.AbsFOp(x)), "ogt"))
        # An even nearest value is one step from the odd one on x's side (magnitude bits).
        odd = self.emit(arith.AddiOp(bits, self.select(away, self._int(-1, i32), self._int(1, i32))))
        fix = self.emit(arith.AndIOp(inexact, even))
        return self.emit(arith.BitcastOp(self.select(fix, odd, bits), F32.element_type))

    def rounded(self, x: SSAValue, dt: DType) -> SSAValue:
        """A bf16 `x` made exactly a bf16 value, so that a chain of bf16 ops rounds after
        each op as the interpreter does. IREE computes bf16 in f32 and folds the
        `extf(truncf(y))` between two ops to `y`, so a `truncf` alone would not round once
        the ops fuse; here the f32 bits are rounded to nearest-even (NaN kept) with integer
        ops it cannot fold. Other dtypes are returned as they are."""
        if dt.name != "bf16":
            return x
        i32 = IntegerType(32)
        wide = self.emit(arith.ExtFOp(x, F32.element_type))
        bits = self.emit(arith.BitcastOp(wide, i32))
        lsb = self.emit(arith.AndIOp(self.emit(arith.ShRUIOp(bits, self._int(16, i32))), self._int(1, i32)))
        up = self.emit(arith.AddiOp(bits, self.emit(arith.AddiOp(lsb, self._int(0x7FFF, i32)))))
        kept = self.emit(arith.AndIOp(up, self._int(-(1 << 16), i32)))
        near = self.emit(arith.BitcastOp(kept, F32.element_type))
        return self.emit(arith.TruncFOp(self.select(self.is_nan(wide), wide, near), dt.element_type))

    def _int_to_f64(self, x: SSAValue, src: DType) -> SSAValue:
        """An integer of 32 or 64 bits as f64, exactly, or (above 2^53) with the bits below
        bit 12 folded into a sticky bit 11: every rounding of the result to 51 bits or fewer
        equals the rounding of `x` itself."""
        if _width(src) == 32:
            return self.cast(x, src, F64)
        negative = self.compare("lt", x, self.constant(0, src), src)
        magnitude = x
        if src.kind == "int":  # two's complement |x|, read as unsigned (|INT64_MIN| = 2^63)
            magnitude = self.select(negative, self.emit(arith.SubiOp(self._int(0, i64), x)), x)
        low = self.emit(arith.AndIOp(magnitude, self._int(0xFFF, i64)))
        sticky = self.select(self.emit(arith.CmpiOp(low, self._int(0, i64), "ne")), self._int(0x800, i64), self._int(0, i64))
        folded = self.emit(arith.OrIOp(self.emit(arith.AndIOp(magnitude, self._int(~0xFFF, i64))), sticky))
        large = self.emit(arith.CmpiOp(magnitude, self._int(1 << 53, i64), "uge"))
        value = self.emit(arith.UIToFPOp(self.select(large, folded, magnitude), F64.element_type))
        if src.kind != "int":
            return value
        return self.select(negative, self.emit(arith.NegfOp(value)), value)

    def _float_to_int(self, x: SSAValue, src: DType, dst: DType) -> SSAValue:
        """Float to integer as MIR casts (docs/mir.md, Rust's `as`): truncated toward zero,
        saturated at the type's range, NaN giving 0. (`arith.fptosi` of a value out of
        range is poison; IREE's CPU code gives INT_MIN or wraps.)"""
        if src.name in _HALF:
            x, src = self.cast(x, src, F32), F32
        signed = dst.kind == "int"
        target = storage_type(dst)
        raw = self.emit(arith.FPToSIOp(x, target) if signed else arith.FPToUIOp(x, target))
        bits = _width(dst)
        low, high = (-(2.0 ** (bits - 1)), 2.0 ** (bits - 1)) if signed else (0.0, 2.0**bits)  # exact powers of 2
        below = self.compare("lt", x, self.constant(low, src), src)
        above = self.compare("ge", x, self.constant(high, src), src)
        value = self.select(above, self.constant(highest_value(dst), dst), raw)
        value = self.select(below, self.constant(lowest_value(dst), dst), value)
        return self.select(self.is_nan(x), self.constant(0, dst), value)

    def _int(self, value: int, t: Attribute) -> SSAValue:
        """A signless integer constant of type `t` (two's complement bits)."""
        width = t.width.data
        raw = value % (1 << width)
        return self.emit(arith.ConstantOp(IntegerAttr(raw - (1 << width) if raw >= 1 << (width - 1) else raw, t)))

    def is_true(self, x: SSAValue, dt: DType) -> SSAValue:
        """`x != 0` as i1 (NaN counts as true, as `bool(nan)` does)."""
        if dt.kind == "bool":
            return x
        return self.compare("ne", x, self.constant(0, dt), dt)

    def to_index(self, x: SSAValue, dt: DType) -> SSAValue:
        """An index from an id of any dtype: floats are truncated toward zero (RLX's f32 ids)."""
        as_i64 = self.cast(x, dt, I64)
        return self.emit(arith.IndexCastOp(as_i64, IndexType()))

    def count(self, size: int | SSAValue, dt: DType) -> SSAValue:
        """A size (static, or an `index` value) as a scalar of `dt`, to divide by."""
        return self.constant(size, dt) if isinstance(size, int) else self.from_index(size, dt)

    def from_index(self, i: SSAValue, dt: DType) -> SSAValue:
        """An index value as a scalar of `dt`."""
        as_i64 = self.emit(arith.IndexCastOp(i, i64))
        return self.cast(as_i64, I64, dt)

    # Arithmetic ---------------------------------------------------------------------

    def add(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        if dt.kind == "complex":
            return self.emit(cx.AddOp(a, b))
        return self._by_kind(dt, a, b, arith.AddfOp, arith.AddiOp, arith.OrIOp)

    def sub(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        if dt.kind == "complex":
            return self.emit(cx.SubOp(a, b))
        return self._by_kind(dt, a, b, arith.SubfOp, arith.SubiOp, arith.XOrIOp)

    def mul(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        if dt.kind == "complex":
            return self.emit(cx.MulOp(a, b))
        return self._by_kind(dt, a, b, arith.MulfOp, arith.MuliOp, arith.AndIOp)

    def div(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """Float division, or integer division truncating toward zero (Rust's `/`).

        Integer division by 0 (and MIN / -1) would trap on the CPU, so the divisor
        is replaced: `x / 0` gives 0, `x / -1` is the wrapping negation.
        """
        if dt.is_float:
            return self.emit(arith.DivfOp(a, b))
        if dt.kind == "complex":
            return self.emit(cx.DivOp(a, b))
        if dt.kind == "bool":  # numpy: a / true = a; a / false = inf or nan, both true
            return self.emit(arith.OrIOp(a, self.logical_not(b)))
        zero, one = self.constant(0, dt), self.constant(1, dt)
        is_zero = self.compare("eq", b, zero, dt)
        safe = self.select(is_zero, one, b)
        if dt.kind == "uint":
            quotient = self.emit(arith.DivUIOp(a, safe))
        else:
            minus_one = self.constant(-1, dt)
            is_minus_one = self.compare("eq", safe, minus_one, dt)
            quotient = self.select(
                is_minus_one,
                self.neg(a, dt),
                self.emit(arith.DivSIOp(a, self.select(is_minus_one, one, safe))),
            )
        return self.select(is_zero, zero, quotient)

    def max(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """numpy's maximum: NaN wins."""
        refuse_complex(dt, "max")
        unsigned = arith.MaxUIOp if dt.kind == "uint" else arith.MaxSIOp
        return self._by_kind(dt, a, b, arith.MaximumfOp, unsigned, arith.OrIOp)

    def min(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """numpy's minimum: NaN wins."""
        refuse_complex(dt, "min")
        unsigned = arith.MinUIOp if dt.kind == "uint" else arith.MinSIOp
        return self._by_kind(dt, a, b, arith.MinimumfOp, unsigned, arith.AndIOp)

    def pow(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        refuse_complex(dt, "pow")
        if dt.is_float:
            return self._float_pow(a, b, dt)
        if dt.kind == "bool":  # a ** false = 1, a ** true = a
            return self.emit(arith.OrIOp(a, self.logical_not(b)))
        return self._integer_pow(a, b, dt)

    def _float_pow(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """IEEE 754 `pow` (C's `pow`, numpy's `power`): `math.powf` of `|a|`, then the
        cases it gets wrong fixed around it (IREE expands `powf` as `exp(b log a)`, NaN for
        any negative base and for `0 ** 0`, `NaN ** 0`, `1 ** NaN`, `(-1) ** inf`):

        - `b == 0` or `a == 1` gives 1, and `|a| == 1` with `b = ±inf` gives 1;
        - a negative base (`-0` and `-inf` included) with an odd integer `b` negates the
          result, with an even integer or infinite `b` keeps it; a finite negative base
          with a non-integer `b` gives NaN.
        """
        one = self.constant(1.0, dt)
        magnitude = self.unary(math.AbsFOp, a)
        result = self.emit(math.PowFOp(magnitude, b))
        whole = self.unary(math.FloorOp, b)
        is_integer = self.compare("eq", whole, b, dt)  # false for NaN, true for ±inf
        half = self.unary(math.FloorOp, self.mul(b, self.constant(0.5, dt), dt))
        is_odd = self.emit(arith.AndIOp(is_integer, self.compare("ne", self.add(half, half, dt), b, dt)))
        result = self.select(self.emit(arith.AndIOp(self.sign_bit(a, dt), is_odd)), self.neg(result, dt), result)
        inf = self.constant(float("inf"), dt)
        finite_negative = self.emit(
            arith.AndIOp(self.compare("lt", a, self.constant(0.0, dt), dt), self.compare("ne", magnitude, inf, dt))
        )
        nan = self.constant(float("nan"), dt)
        result = self.select(self.emit(arith.AndIOp(finite_negative, self.logical_not(is_integer))), nan, result)
        b_infinite = self.compare("eq", self.unary(math.AbsFOp, b), inf, dt)
        unit = self.emit(arith.AndIOp(self.compare("eq", magnitude, one, dt), b_infinite))
        result = self.select(unit, one, result)
        result = self.select(self.compare("eq", a, one, dt), one, result)
        return self.select(self.compare("eq", b, self.constant(0.0, dt), dt), one, result)

    def sign_bit(self, x: SSAValue, dt: DType) -> SSAValue:
        """Whether float `x` has its sign bit set (true for -0.0 and -NaN), as i1."""
        bits = IntegerType(_FLOAT_BITS[dt.name])
        as_int = self.emit(arith.BitcastOp(x, bits))
        return self.emit(arith.CmpiOp(as_int, self.emit(arith.ConstantOp(IntegerAttr(0, bits))), "slt"))

    def _integer_pow(self, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """`a ** b` with wrapping products, by squaring over every bit of `b`.

        (IREE cannot compile `math.ipowi`.) A negative exponent, which numpy
        rejects, gives 0.
        """
        one = self.constant(1, dt)
        result, base = one, a
        for bit in range(dt.nbytes * 8):
            shifted = self.emit(arith.ShRUIOp(b, self.constant(bit, dt)))
            is_set = self.compare("ne", self.emit(arith.AndIOp(shifted, one)), self.constant(0, dt), dt)
            result = self.select(is_set, self.mul(result, base, dt), result)
            base = self.mul(base, base, dt)
        if dt.kind == "int":
            negative = self.compare("lt", b, self.constant(0, dt), dt)
            result = self.select(negative, self.constant(0, dt), result)
        return result

    def _by_kind(self, dt: DType, a: SSAValue, b: SSAValue, on_float, on_int, on_bool) -> SSAValue:
        refuse_complex(dt, on_float.name)
        if dt.is_float:
            return self.emit(on_float(a, b))
        return self.emit((on_bool if dt.kind == "bool" else on_int)(a, b))

    def neg(self, x: SSAValue, dt: DType) -> SSAValue:
        if dt.is_float:
            return self.emit(arith.NegfOp(x))
        if dt.kind == "complex":
            return self.emit(cx.NegOp(x))
        return self.emit(arith.SubiOp(self.constant(0, dt), x))

    def abs(self, x: SSAValue, dt: DType) -> SSAValue:
        """`|x|`; on complex, the modulus as a complex number (numpy's `abs`, cast back)."""
        if dt.kind == "complex":
            part = dtypes.dtype_of(dt.element_type.element_type)
            return self.cast(self.emit(cx.AbsOp(x)), part, dt)
        if dt.is_float:
            return self.emit(math.AbsFOp(x))
        if dt.kind == "int":
            return self.emit(math.AbsIOp(x))
        return x

    def logical_not(self, x: SSAValue) -> SSAValue:
        return self.emit(arith.XOrIOp(x, self.constant(1, BOOL)))

    def compare(self, predicate: str, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
        """`a <predicate> b` as i1; `predicate` is one of eq, ne, lt, le, gt, ge."""
        refuse_complex(dt, "a comparison")
        if dt.is_float:
            return self.emit(arith.CmpfOp(a, b, _CMPF[predicate]))
        table = _CMPI_SIGNED if dt.kind == "int" else _CMPI_UNSIGNED
        return self.emit(arith.CmpiOp(a, b, table[predicate]))

    def is_nan(self, x: SSAValue) -> SSAValue:
        return self.emit(arith.CmpfOp(x, x, "uno"))

    def index_compare(self, predicate: str, a: SSAValue, b: SSAValue) -> SSAValue:
        """Comparison of two `index` values (eq, ne, lt, le, gt, ge)."""
        return self.emit(arith.CmpiOp(a, b, _CMPI_SIGNED[predicate]))

    def select(self, cond: SSAValue, a: SSAValue, b: SSAValue) -> SSAValue:
        return self.emit(arith.SelectOp(cond, a, b))

    def unary(self, op_class: Callable[[SSAValue], Operation], x: SSAValue) -> SSAValue:
        """A float `math`/`arith` op of one operand (`math.ExpOp`, ...)."""
        if isinstance(x.type, ComplexType):
            raise UnsupportedDType(f"{op_class.name} of element type {x.type} has no lowering to linalg")
        return self.emit(op_class(x))

    # Complex parts -----------------------------------------------------------------

    def conj(self, z: SSAValue) -> SSAValue:
        return self.emit(cx.ConjOp(z))

    def real_part(self, z: SSAValue) -> SSAValue:
        return self.emit(cx.ReOp(z))

    def imag_part(self, z: SSAValue) -> SSAValue:
        return self.emit(cx.ImOp(z))

    # Float functions used by several rules -------------------------------------------

    def exp(self, x: SSAValue) -> SSAValue:
        return self.unary(math.ExpOp, x)

    def log(self, x: SSAValue) -> SSAValue:
        return self.unary(math.LogOp, x)

    def sqrt(self, x: SSAValue) -> SSAValue:
        return self.unary(math.SqrtOp, x)

    def tanh(self, x: SSAValue) -> SSAValue:
        return self.unary(math.TanhOp, x)
