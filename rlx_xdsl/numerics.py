"""Exact arithmetic shared by every kernel: the one place each numeric rule lives.

* `convert`: every dtype conversion (casts, results, literals) rounds once, to
  nearest-even; float -> int truncates and saturates (Rust `as`: NaN -> 0);
  int -> int wraps; anything -> i1 is "nonzero"; complex -> real takes the real part.
* Integer arithmetic stays in integers: `divide` truncates toward zero, `power`
  multiplies; both reject what has no integer answer (`KernelError`). Overflow wraps
  (two's complement). i1 operands act as the integers 0 and 1, and an i1 result is
  true where the integer result is nonzero.
* Sums, means, matmuls and scans of f16/bf16 accumulate in f32 (`accumulation_dtype`)
  and round once at the end, as GPU kernels do; numpy would add bf16 in bf16, so
  `sum(ones(4096, bf16))` would be 256.
* `round_half_away` rounds halves away from zero exactly, in every float dtype.

Helpers raise `KernelError` with a message that does not name the op; `run_kernel`
adds the op's name.
"""

from __future__ import annotations

from collections.abc import Callable

import ml_dtypes
import numpy as np
from xdsl.utils.exceptions import DiagnosticException

BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
F32 = np.dtype(np.float32)
F64 = np.dtype(np.float64)
_HALF_TYPES = (F16, BF16)
NARROW_FLOATS = tuple(
    np.dtype(t)
    for t in (
        ml_dtypes.float8_e4m3fn,
        ml_dtypes.float8_e4m3fnuz,
        ml_dtypes.float8_e5m2,
        ml_dtypes.float8_e5m2fnuz,
        ml_dtypes.float4_e2m1fn,
    )
)
"""The 8- and 4-bit floats (numpy kind 'V'): ml_dtypes computes with them in f32 and
rounds once."""
NARROW_INTS = tuple(np.dtype(t) for t in (ml_dtypes.int2, ml_dtypes.uint2, ml_dtypes.int4, ml_dtypes.uint4))
"""The 2- and 4-bit integers (numpy kind 'V'); conversions to them wrap as numpy's do."""


class KernelError(DiagnosticException):
    """An op cannot compute on its actual inputs (integer division by zero, an index
    out of range, a run-time shape that contradicts its type).

    Raised without the op's name by kernels and helpers; `run_kernel` re-raises it as
    `'<op>' <message>` with `op` set, so it is located at the op that failed.
    """

    def __init__(self, message: str, op=None):
        super().__init__(message)
        self.message = message
        self.op = op


def is_float(dtype: np.dtype) -> bool:
    """f16, bf16, f32, f64 and the 8- and 4-bit floats (bf16 and those have numpy kind
    'V', so `kind == 'f'` misses them)."""
    return np.dtype(dtype) in (F16, BF16, F32, F64, *NARROW_FLOATS)


def is_integer(dtype: np.dtype) -> bool:
    """Signed, unsigned (2- and 4-bit ones included) and boolean dtypes."""
    return np.dtype(dtype).kind in "iub" or np.dtype(dtype) in NARROW_INTS


# Conversions --------------------------------------------------------------------------


def _odd_neighbour(nearest: np.ndarray, above: np.ndarray, below: np.ndarray) -> np.ndarray:
    """`nearest` rounded to odd instead: where it is inexact (x lies `above` or `below`
    it) and its last bit is even, the other neighbour of x, one ulp toward x."""
    uint = np.uint32 if nearest.dtype == F32 else np.uint64
    even = (nearest.view(uint) & 1) == 0
    result = np.where(above & even, np.nextafter(nearest, nearest.dtype.type(np.inf)), nearest)
    return np.where(below & even, np.nextafter(nearest, nearest.dtype.type(-np.inf)), result)


def _f64_to_f32_round_to_odd(x: np.ndarray) -> np.ndarray:
    """f64 -> f32 rounding to odd: an inexact result has an odd last bit.

    Rounding to odd with two spare bits, then to nearest-even in the narrower type,
    equals rounding once; rounding to nearest twice does not (a value just above a
    bf16 midpoint can first round onto the midpoint, then to even).
    """
    nearest = x.astype(F32)
    wide = nearest.astype(F64)
    finite = np.isfinite(x)
    return _odd_neighbour(nearest, finite & (x > wide), finite & (x < wide))


def _int_to_f64_round_to_odd(x: np.ndarray) -> np.ndarray:
    """Integers as f64 rounded to odd (32-bit integers are exact)."""
    nearest = x.astype(F64)
    if x.dtype.itemsize < 8:
        return nearest
    # Compare in integers; only 2**63 (2**64 for ui64), from values near the maximum,
    # does not fit back.
    top = nearest >= (2.0**64 if x.dtype.kind == "u" else 2.0**63)
    back = np.where(top, 0.0, nearest).astype(x.dtype)
    return _odd_neighbour(nearest, ~top & (x > back), top | (x < back))


def _to_narrow_float(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """To bf16 or an 8- or 4-bit float, rounded once: ml_dtypes converts f64 through f32
    (rounding twice), so wider sources round to odd on the way."""
    if x.dtype in (F32, F16, BF16) or x.dtype.kind == "b" or x.dtype.itemsize <= 2:
        return x.astype(F32).astype(dtype)  # exact in f32, rounded once
    wide = _int_to_f64_round_to_odd(x) if x.dtype.kind in "iu" else x.astype(F64)
    return _f64_to_f32_round_to_odd(wide).astype(dtype)


def _float_to_int(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """Truncate toward zero and saturate at the dtype's range; NaN gives 0 (Rust `as`)."""
    info = ml_dtypes.iinfo(dtype)  # numpy's iinfo, and int4 and the like
    t = np.trunc(x.astype(F64))
    low, high = t < info.min, t >= float(info.max) + 1.0  # info.max + 1 is a power of two
    work = np.dtype(np.int64) if dtype in NARROW_INTS else dtype
    inside = np.where(np.isnan(t) | low | high, 0.0, t).astype(work)
    return np.where(high, info.max, np.where(low, info.min, inside)).astype(work).astype(dtype)


def convert(x: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """`x` as `dtype`, rounded once (see the module docstring for each rule)."""
    x = np.asarray(x)
    dtype = np.dtype(dtype)
    if x.dtype == dtype:
        return x
    with np.errstate(all="ignore"):
        if dtype.kind == "b":
            return x != 0
        if x.dtype.kind == "c" and dtype.kind != "c":
            x = np.real(x)
        if x.dtype.kind == "b":
            x = x.astype(np.uint8)
        if dtype.kind == "c":  # complex<f32>: the real part rounds as an f32 would
            return (x if x.dtype.kind == "c" or x.dtype in (F32, F64) else convert(x, F32)).astype(dtype)
        if dtype == BF16 or dtype in NARROW_FLOATS:
            return _to_narrow_float(x, dtype)
        if is_integer(dtype):
            if is_float(x.dtype):
                return _float_to_int(x, dtype)
            if dtype in NARROW_INTS or x.dtype in NARROW_INTS:  # ml_dtypes casts them only to and from wide ones
                return x.astype(np.int64).astype(dtype)
            return x.astype(dtype)
        if x.dtype == BF16 or x.dtype in NARROW_FLOATS:
            x = x.astype(F32)  # exact
        elif x.dtype in NARROW_INTS:
            x = x.astype(F64)  # exact
        return x.astype(dtype)


def round_half_away(x: np.ndarray) -> np.ndarray:
    """Round to the nearest integer, halves away from zero, exactly (integers unchanged).

    `x - trunc(x)` is exact in x's own dtype, so no `+ 0.5` rounding can move a
    value such as 0.49999997 or an odd integer above 2**23.
    """
    if not is_float(x.dtype):
        return x
    work = x.astype(F32) if x.dtype in _HALF_TYPES else x
    with np.errstate(invalid="ignore"):  # NaN, and inf - inf (inf is kept by `whole`)
        whole = np.trunc(work)
        step = (np.abs(work - whole) >= 0.5).astype(work.dtype)
        return (whole + np.copysign(step, work)).astype(x.dtype)


# Integer arithmetic ------------------------------------------------------------------------


BinaryFn = Callable[[np.ndarray, np.ndarray], np.ndarray]


def multiply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a * b`; complex operands as `(ac - bd) + (ad + bc)i`, each product rounded to the
    part dtype before the add (numpy's own complex multiply fuses `ac - bd` into a
    multiply-add in its SIMD loop, taken on arrays of 4 or more elements on AVX2 CPUs:
    its results would depend on the array's length and the CPU)."""
    if a.dtype.kind != "c" and b.dtype.kind != "c":
        return np.multiply(a, b)
    dtype = np.result_type(a, b)
    a, b = a.astype(dtype), b.astype(dtype)
    out = np.empty(np.broadcast_shapes(a.shape, b.shape), dtype)
    out.real = a.real * b.real - a.imag * b.imag
    out.imag = a.real * b.imag + a.imag * b.real
    return out


def on_integers(fn: BinaryFn) -> BinaryFn:
    """`fn` for any dtype, with bools computed as the integers 0 and 1 (the i1 result
    is "nonzero"): numpy refuses `-` on bools and gives `True / False` as inf."""

    def apply(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        if a.dtype.kind == "b":
            return fn(a.astype(np.int8), b.astype(np.int8)) != 0
        return fn(a, b)

    return apply


@on_integers
def _int_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if (b == 0).any():
        raise KernelError("integer division by zero")
    with np.errstate(all="ignore"):  # MIN / -1 wraps to MIN
        q = np.floor_divide(a, b)
        # Floor and truncation differ when the division is inexact and the signs differ.
        q += ((q * b != a) & ((a < 0) != (b < 0))).astype(q.dtype)
    return q


@on_integers
def _int_power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if (b < 0).any():
        raise KernelError(f"integer power with a negative exponent ({b[b < 0].flat[0]})")
    with np.errstate(all="ignore"):
        return np.power(a, b)


def divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a / b`: IEEE for floats (x/0 is ±inf, 0/0 NaN); truncating for integers."""
    if is_integer(a.dtype):
        return _int_divide(a, b)
    with np.errstate(all="ignore"):
        return a / b


def power(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a ** b`: IEEE `pow` for floats; exact (wrapping) multiplication for integers."""
    if is_integer(a.dtype):
        return _int_power(a, b)
    with np.errstate(all="ignore"):
        return np.power(a, b)



# Signed-zero-aware max/min ---------------------------------------------------------------


def maximum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 `maximum`: NaN propagates and +0 > -0 (numpy's `maximum` may return
    either zero: `maximum(-0, +0)` can be -0). Bools act as 0 and 1."""
    if not is_float(a.dtype) or not is_float(b.dtype):
        return on_integers(np.maximum)(a, b)
    return np.where(a == b, np.where(np.signbit(a), b, a), np.maximum(a, b))


def minimum(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """IEEE 754-2019 `minimum`: NaN propagates and -0 < +0."""
    if not is_float(a.dtype) or not is_float(b.dtype):
        return on_integers(np.minimum)(a, b)
    return np.where(a == b, np.where(np.signbit(a), a, b), np.minimum(a, b))


def reduce_max(x: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
    """`np.max` over `axis` by IEEE 754-2019 `maximum`: a zero result is +0 when any
    +0 is reduced (numpy's answer depends on the order it visits zeros in)."""
    m = np.max(x, axis=axis, keepdims=keepdims)
    if not is_float(x.dtype):
        return m
    positive_zero = np.any((x == 0) & ~np.signbit(x), axis=axis, keepdims=keepdims)
    return np.where(m == 0, np.where(positive_zero, x.dtype.type(0), -x.dtype.type(0)), m)


def reduce_min(x: np.ndarray, axis, keepdims: bool = False) -> np.ndarray:
    """`np.min` over `axis` by IEEE 754-2019 `minimum`: a zero result is -0 when any -0 is reduced."""
    m = np.min(x, axis=axis, keepdims=keepdims)
    if not is_float(x.dtype):
        return m
    negative_zero = np.any((x == 0) & np.signbit(x), axis=axis, keepdims=keepdims)
    return np.where(m == 0, np.where(negative_zero, -x.dtype.type(0), x.dtype.type(0)), m)


# Accumulation ------------------------------------------------------------------------------


def accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype sums over `dtype` accumulate in: f32 for halves, else `dtype` itself.

    Summing thousands of f16/bf16 values in half precision would lose most of
    their bits; GPU kernels accumulate them in f32 and round the result back.
    """
    return F32 if np.dtype(dtype) in _HALF_TYPES else np.dtype(dtype)


def widened(x: np.ndarray) -> np.ndarray:
    """`x` in its accumulation dtype (exact: every half is an f32)."""
    return x.astype(accumulation_dtype(x.dtype), copy=False)


def accumulate_sum(x: np.ndarray, axis=None, keepdims: bool = False) -> np.ndarray:
    """Sum in the accumulation dtype (integers wrap; the result is not rounded back)."""
    w = widened(x)
    return np.sum(w, axis=axis, keepdims=keepdims, dtype=w.dtype)


def accumulate_matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`a @ b` accumulated in the accumulation dtype (the result is not rounded back)."""
    return np.matmul(widened(a), widened(b))
