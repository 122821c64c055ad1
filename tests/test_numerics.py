"""`rlx_xdsl.numerics` against oracles written here with exact Python arithmetic.

Every rounding is checked against the nearest representable value found with
`fractions.Fraction` (bf16 and f16 by a table of all their values, f32 by exact
distances to the candidates around it), integer rules against Python's unbounded
integers, so the oracles share no code with what they check.
"""

from __future__ import annotations

import bisect
import itertools
import math
from fractions import Fraction
from functools import cache

import ml_dtypes
import numpy as np
import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st

from rlx_xdsl import numerics
from rlx_xdsl.numerics import BF16, F16, F32, F64, KernelError

SETTINGS = settings(max_examples=150, deadline=None)

UINT = {2: np.uint16, 4: np.uint32, 8: np.uint64}


# Oracles ----------------------------------------------------------------------------------


@cache
def _table(dtype: np.dtype) -> tuple[list[Fraction], list[int]]:
    """Every finite non-negative value of a 16-bit float type, sorted, with its bits."""
    bits = np.arange(0x8000, dtype=np.uint16)
    with np.errstate(invalid="ignore"):
        values = bits.view(dtype).astype(np.float64)
    finite = np.isfinite(values)
    pairs = sorted((Fraction(float(v)), int(b)) for v, b in zip(values[finite], bits[finite]))
    return [p[0] for p in pairs], [p[1] for p in pairs]


def _max_and_half_ulp(dtype: np.dtype) -> tuple[Fraction, Fraction]:
    info = np.finfo(dtype) if dtype != BF16 else ml_dtypes.finfo(ml_dtypes.bfloat16)
    biggest = Fraction(float(info.max))
    below = Fraction(float(np.nextafter(np.array(info.max, dtype), np.array(0, dtype)).astype(np.float64)))
    return biggest, (biggest - below) / 2


def nearest_even(q: Fraction, dtype: np.dtype) -> float:
    """The value of `dtype` nearest to `q`, ties to the even bit pattern; ±inf past the top."""
    dtype = np.dtype(dtype)
    sign = -1 if q < 0 else 1
    a = abs(q)
    biggest, half_ulp = _max_and_half_ulp(dtype)
    if a >= biggest + half_ulp:
        return sign * math.inf
    if dtype in (BF16, F16):
        values, bits = _table(dtype)
        i = bisect.bisect_left(values, a)
        candidates = [j for j in (i - 1, i) if 0 <= j < len(values)]
    else:
        guess = np.array(min(float(a), float(biggest)), dtype)
        with np.errstate(over="ignore"):
            near = [guess, np.nextafter(guess, dtype.type(np.inf)), np.nextafter(guess, dtype.type(0))]
        near = [v for v in near if np.isfinite(v)]
        values = [Fraction(float(v)) for v in near]
        bits = [int(np.array(v, dtype).view(UINT[dtype.itemsize])) for v in near]
        candidates = list(range(len(near)))
    best = min(candidates, key=lambda j: (abs(values[j] - a), bits[j] & 1))
    return sign * float(values[best])


def same_value(got, want: float) -> bool:
    """Equal as floats, with the sign of zero and NaN-ness compared too."""
    got = float(got)
    if math.isnan(want):
        return math.isnan(got)
    return got == want and math.copysign(1, got) == math.copysign(1, want)


# Conversions -------------------------------------------------------------------------------


def _midpoints(dtype: np.dtype) -> st.SearchStrategy[float]:
    """f64 values at and next to the midpoints between neighbouring `dtype` values."""
    width = UINT[np.dtype(dtype).itemsize]
    top = 0x7F7F if dtype == BF16 else 0x7BFF if dtype == F16 else 0x7F7FFFFF

    @st.composite
    def near_midpoint(draw) -> float:
        low = draw(st.integers(0, top - 1))
        a, b = np.array([low, low + 1], width).view(dtype).astype(np.float64)
        step = draw(st.integers(-3, 3))
        x = (a + b) / 2
        for _ in range(abs(step)):
            x = np.nextafter(x, math.inf if step > 0 else -math.inf)
        return float(x) * draw(st.sampled_from([1, -1]))

    return near_midpoint()


@pytest.mark.parametrize("dtype", [BF16, F16, F32], ids=["bf16", "f16", "f32"])
@SETTINGS
@given(data=st.data())
def test_f64_to_narrow_floats_rounds_once(dtype, data):
    x = data.draw(st.one_of(st.floats(allow_nan=False, allow_infinity=False), _midpoints(dtype)))
    got = numerics.convert(np.array([x]), dtype)[0]
    assert same_value(np.float64(got), nearest_even(Fraction(x), dtype) if x != 0 else x)


def test_f64_to_bf16_just_above_a_midpoint_rounds_up():
    x = 1 + 2**-8 + 2**-30  # rounding to f32 first lands on the midpoint, then on 1.0
    assert float(numerics.convert(np.array([x]), BF16)[0]) == 1 + 2**-7


@pytest.mark.parametrize("dtype", [BF16, F16, F32, F64], ids=["bf16", "f16", "f32", "f64"])
@SETTINGS
@given(n=st.one_of(st.integers(-(2**63), 2**63 - 1), st.integers(2**52, 2**63 - 1).map(lambda v: v | 1)))
@example(n=2**60 + 2**52 + 1)
@example(n=2**63 - 1)
@example(n=-(2**63))
def test_i64_to_floats_rounds_once(dtype, n):
    got = numerics.convert(np.array([n], np.int64), dtype)[0]
    assert same_value(np.float64(got), nearest_even(Fraction(n), dtype))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.int32, np.uint32, np.int64])
@SETTINGS
@given(x=st.one_of(st.floats(width=64), st.floats(-(2.0**65), 2.0**65)))
@example(x=float("nan"))
@example(x=2.0**63)
@example(x=-(2.0**63))
@example(x=-0.9)
def test_float_to_int_truncates_and_saturates(dtype, x):
    info = np.iinfo(dtype)
    want = 0 if math.isnan(x) else min(max(math.trunc(x) if math.isfinite(x) else x, info.min), info.max)
    assert int(numerics.convert(np.array([x]), dtype)[0]) == want


@SETTINGS
@given(x=st.integers(-(2**63), 2**63 - 1))
def test_int_to_int_wraps(x):
    assert int(numerics.convert(np.array([x], np.int64), np.int8)[0]) == (x + 128) % 256 - 128


def test_anything_to_i1_is_nonzero_and_complex_to_real_takes_the_real_part():
    assert numerics.convert(np.array([0.0, -0.0, np.nan, 3.0]), np.bool_).tolist() == [False, False, True, True]
    assert numerics.convert(np.array([1.5 + 2j], np.complex64), F32).tolist() == [1.5]


# Rounding ---------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [BF16, F16, F32, F64], ids=["bf16", "f16", "f32", "f64"])
@SETTINGS
@given(bits=st.integers(0, 2**64 - 1))
@example(bits=0x3EFFFFFF)  # 0.49999997 in f32
@example(bits=0x4B000001)  # 8388609.0: an odd integer above 2**23
def test_round_half_away_is_exact(dtype, bits):
    size = np.dtype(dtype).itemsize
    x = np.array([bits % (1 << (8 * size))], UINT[size]).view(dtype)
    value = float(x[0])
    got = float(numerics.round_half_away(x)[0])
    if not math.isfinite(value):
        assert same_value(got, value)
        return
    q = Fraction(value)
    magnitude = math.floor(abs(q) + Fraction(1, 2))
    assert same_value(got, math.copysign(float(magnitude), value))


def test_round_examples_of_the_issue():
    x = np.array([0.49999997, 8388609.0, 16777215.0, -2.5, 2.5, -0.4], np.float32)
    got = numerics.round_half_away(x)
    assert got.tolist() == [0.0, 8388609.0, 16777215.0, -3.0, 3.0, -0.0]
    assert math.copysign(1, got[-1]) == -1


# Integer arithmetic -------------------------------------------------------------------------

INT_DTYPES = [np.int8, np.int32, np.int64, np.uint8, np.uint32]


def _ints(dtype) -> st.SearchStrategy[int]:
    info = np.iinfo(dtype)
    return st.one_of(st.integers(int(info.min), int(info.max)), st.sampled_from([int(info.min), int(info.max), 0, 1]))


def _wrap(value: int, dtype) -> int:
    bits = np.iinfo(dtype).bits
    value %= 1 << bits
    return value - (1 << bits) if np.iinfo(dtype).min < 0 and value >= 1 << (bits - 1) else value


@pytest.mark.parametrize("dtype", INT_DTYPES)
@SETTINGS
@given(data=st.data())
def test_integer_division_truncates_toward_zero_exactly(dtype, data):
    a, b = data.draw(_ints(dtype)), data.draw(_ints(dtype))
    assume(b != 0)
    quotient = abs(a) // abs(b) * (1 if (a < 0) == (b < 0) else -1)
    got = numerics.divide(np.array([a], dtype), np.array([b], dtype))
    assert got.dtype == np.dtype(dtype)
    assert int(got[0]) == _wrap(quotient, dtype)


def test_i64_division_above_2_pow_53_is_exact():
    a = np.array([2**62 + 1, -(2**62) - 3, 2**63 - 1], np.int64)
    assert numerics.divide(a, np.array([1, 2, 7], np.int64)).tolist() == [2**62 + 1, -(2**61) - 1, (2**63 - 1) // 7]


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.bool_])
def test_integer_division_by_zero_is_an_error(dtype):
    with pytest.raises(KernelError, match="^integer division by zero$"):
        numerics.divide(np.array([1, 1], dtype), np.array([1, 0], dtype))


@pytest.mark.parametrize("dtype", INT_DTYPES)
@SETTINGS
@given(data=st.data())
def test_integer_power_is_exact_and_wraps(dtype, data):
    a = data.draw(_ints(dtype))
    b = data.draw(st.integers(0, 70))
    got = numerics.power(np.array([a], dtype), np.array([b], dtype))
    assert int(got[0]) == _wrap(pow(a, b), dtype)


def test_integer_power_with_a_negative_exponent_is_an_error():
    with pytest.raises(KernelError, match=r"^integer power with a negative exponent \(-1\)$"):
        numerics.power(np.array([2, 2], np.int32), np.array([3, -1], np.int32))


def test_bools_compute_as_zero_and_one():
    t, f = np.array([True, True, False, False]), np.array([True, False, True, False])
    assert numerics.on_integers(np.subtract)(t, f).tolist() == [False, True, True, False]
    assert numerics.on_integers(np.add)(t, f).tolist() == [True, True, True, False]
    assert numerics.divide(t, np.array([True] * 4)).tolist() == [True, True, False, False]
    assert numerics.power(f, np.array([False] * 4)).tolist() == [True] * 4


# Accumulation -------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [BF16, F16], ids=["bf16", "f16"])
@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 8192), seed=st.integers(0, 2**32 - 1))
def test_half_sums_accumulate_in_f32(dtype, n, seed):
    units = np.random.default_rng(seed).integers(-16, 17, size=n)
    x = (units / 16).astype(dtype)  # multiples of 1/16: every partial sum is exact in f32
    total = numerics.accumulate_sum(x)
    assert total.dtype == F32
    assert float(total) == float(sum(Fraction(int(u), 16) for u in units))


def test_sum_of_4096_bf16_ones_is_4096():
    assert float(numerics.accumulate_sum(np.ones(4096, BF16))) == 4096.0
    assert float(np.asarray(np.ones(4096, BF16).sum())) == 256.0  # what numpy alone gives


def test_half_matmul_accumulates_in_f32():
    ones = np.ones((1, 4096), F16)
    assert float(numerics.accumulate_matmul(ones, ones.T)[0, 0]) == 4096.0


# The 8- and 4-bit floats, decoded here from their bit layouts ------------------------------

NARROW_FLOATS = {  # name: (exponent bits, mantissa bits, bias, what the top codes mean)
    "float8_e4m3fn": (4, 3, 7, "fn"),  # no infinities; all ones is NaN
    "float8_e4m3fnuz": (4, 3, 8, "fnuz"),  # no infinities, no -0 (its code is NaN)
    "float8_e5m2": (5, 2, 15, "ieee"),
    "float8_e5m2fnuz": (5, 2, 16, "fnuz"),
    "float4_e2m1fn": (2, 1, 1, "none"),  # no infinities, no NaN: saturates
}


@cache
def _narrow_values(name: str) -> list[tuple[Fraction, int]]:
    """The finite non-negative values of the format with their codes, from the layout alone."""
    ebits, mbits, bias, top = NARROW_FLOATS[name]
    values = []
    for code in range(1 << (ebits + mbits)):
        e, m = code >> mbits, code & ((1 << mbits) - 1)
        if (top == "ieee" and e == (1 << ebits) - 1) or (top == "fn" and code == (1 << (ebits + mbits)) - 1):
            continue
        scale = Fraction(2) ** ((e if e else 1) - bias)
        values.append(((Fraction(m, 1 << mbits) + (1 if e else 0)) * scale, code))
    return values


def _narrow_nearest(x: float, name: str) -> float:
    """Round to nearest, ties to the even code; past the top (a virtual next value one step
    up) ±inf, or NaN without infinities, or the largest value where there is no NaN either."""
    values = _narrow_values(name)
    (big, code), (below, _) = values[-1], values[-2]
    candidates = [*values, (2 * big - below, code + 1)]
    i = bisect.bisect_left(candidates, (abs(Fraction(x)), -1))
    near = candidates[max(i - 1, 0) : i + 1]
    value, code = min(near, key=lambda vc: (abs(vc[0] - abs(Fraction(x))), vc[1] & 1))
    sign = math.copysign(1.0, x)
    top = NARROW_FLOATS[name][3]
    if value > big:
        return float(big) * sign if top == "none" else sign * math.inf if top == "ieee" else math.nan
    if value == 0 and top == "fnuz":
        return 0.0  # no -0
    return sign * float(value)


@pytest.mark.parametrize("name", list(NARROW_FLOATS))
@pytest.mark.parametrize("source", [F64, F32], ids=["f64", "f32"])
def test_conversions_to_the_8_and_4_bit_floats_round_once(name, source):
    """Every value, every midpoint and its neighbours in the source type, both signs."""
    values = [v for v, _ in _narrow_values(name)]
    values.append(2 * values[-1] - values[-2])  # the overflow threshold lies below it
    xs = []
    for a, b in itertools.pairwise(values):
        mid = source.type(float((a + b) / 2))
        below, above = np.nextafter(mid, source.type(0)), np.nextafter(mid, source.type(np.inf))
        xs += [float(a), float(mid), float(below), float(above)]
    xs += [-x for x in xs] + [1e30]
    got = numerics.convert(np.array(xs, source), np.dtype(getattr(ml_dtypes, name))).astype(np.float64)
    for x, g in zip(xs, got):
        assert same_value(g, _narrow_nearest(x, name)), (x, g)


def test_narrow_integers_wrap_from_integers_and_saturate_from_floats():
    ints = np.arange(-40, 40)
    for name, low, high in (("int4", -8, 7), ("uint4", 0, 15), ("int2", -2, 1), ("uint2", 0, 3)):
        dtype = np.dtype(getattr(ml_dtypes, name))
        span = high - low + 1
        assert numerics.convert(ints, dtype).astype(np.int64).tolist() == [(i - low) % span + low for i in ints]
        floats = np.array([-9.7, -0.5, 2.9, 100.0, np.nan])
        want = [low, 0, min(2, high), high, 0]
        assert numerics.convert(floats, dtype).astype(np.int64).tolist() == want
