"""Bit formats of quantised weights, decoded by formula (not through ml_dtypes, which
the tests use as the oracle): OCP FP8 E4M3 (`float8_e4m3fn`: no infinities, NaN at
S.1111.111) and E5M2, FP4 E2M1, and signed 4-bit integers. Each table maps every code
(256 bytes, or 16 nibbles) to its f32 value; kernels and lowerings index them.
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np


def _sign(code: int, bits: int) -> float:
    return -1.0 if code >> (bits - 1) & 1 else 1.0


def _minifloat(code: int, exp_bits: int, man_bits: int) -> float:
    """A sign-exponent-mantissa code with IEEE-style bias and subnormals (no special values)."""
    bias = (1 << (exp_bits - 1)) - 1
    e = (code >> man_bits) & ((1 << exp_bits) - 1)
    m = code & ((1 << man_bits) - 1)
    sign = _sign(code, 1 + exp_bits + man_bits)
    if e == 0:
        return sign * m / (1 << man_bits) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)


def _e4m3fn(code: int) -> float:
    if code & 0x7F == 0x7F:
        return math.copysign(math.nan, _sign(code, 8))
    return _minifloat(code, 4, 3)


def _e5m2(code: int) -> float:
    if (code >> 2) & 0x1F == 0x1F:
        return math.copysign(math.inf if code & 3 == 0 else math.nan, _sign(code, 8))
    return _minifloat(code, 5, 2)


@cache
def table(fmt: str) -> np.ndarray:
    """The f32 value of every code of `fmt`: `e4m3fn`, `e5m2` (256), `e2m1`, `int4` (16)."""
    if fmt == "e4m3fn":
        values = [_e4m3fn(c) for c in range(256)]
    elif fmt == "e5m2":
        values = [_e5m2(c) for c in range(256)]
    elif fmt == "e2m1":
        values = [_minifloat(c, 2, 1) for c in range(16)]
    elif fmt == "int4":
        values = [c - 16 if c >= 8 else c for c in range(16)]
    else:
        raise ValueError(f"unknown format {fmt}")
    out = np.asarray(values, np.float32)
    out.flags.writeable = False
    return out


def finite_table(fmt: str) -> tuple[np.ndarray, dict[int, float]]:
    """`table(fmt)` with its non-finite entries set to 0, and those entries by code
    (lowerings keep constants finite and select the few special codes)."""
    values = table(fmt)
    special = {int(c): float(values[c]) for c in np.flatnonzero(~np.isfinite(values))}
    return np.where(np.isfinite(values), values, np.float32(0)), special


def nibbles(packed: np.ndarray) -> np.ndarray:
    """Bytes `[K/2, N]` holding two 4-bit codes each, low nibble first along K: the codes `[K, N]`."""
    packed = packed.astype(np.uint8)
    out = np.empty((packed.shape[0] * 2, *packed.shape[1:]), np.uint8)
    out[0::2] = packed & 0x0F
    out[1::2] = packed >> 4
    return out
