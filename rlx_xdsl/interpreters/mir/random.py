"""numpy semantics of MIR random numbers and sampling: rng_uniform, rng_normal, sample.

Philox-4x64-10 is computed here vectorised over counters with 32-bit limbs for the
64x64->128-bit products (numpy has no such multiply); `tests/dialects/mir/test_random.py`
checks its bits against `numpy.random.Philox`. The bit layout is documented in
`rlx_xdsl.dialects.mir.random`.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import random as rnd
from rlx_xdsl.interpreters.common import result_dtype
from rlx_xdsl.numerics import KernelError, convert

PHILOX_M = (0xD2E7470EE14C6C93, 0xCA5A826395121157)
"""The round multipliers of Philox-4x64."""
PHILOX_W = (0x9E3779B97F4A7C15, 0xBB67AE8584CAA73B)
"""The key bumps (Weyl sequence) of Philox-4x64."""
ROUNDS = 10

_LOW32 = np.uint64(0xFFFFFFFF)
_32 = np.uint64(32)


def mulhilo(a: int, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The low and high 64-bit words of the 128-bit products `a * b` (b: uint64 array)."""
    a_lo, a_hi = np.uint64(a & 0xFFFFFFFF), np.uint64(a >> 32)
    b_lo, b_hi = b & _LOW32, b >> _32
    with np.errstate(over="ignore"):
        ll, lh, hl, hh = a_lo * b_lo, a_lo * b_hi, a_hi * b_lo, a_hi * b_hi
        middle = (ll >> _32) + (lh & _LOW32) + (hl & _LOW32)
        low = (ll & _LOW32) | (middle << _32)
        high = hh + (lh >> _32) + (hl >> _32) + (middle >> _32)
    return low, high


def philox_blocks(counters: np.ndarray, seed: int) -> list[np.ndarray]:
    """The four uint64 words of Philox-4x64-10 for each counter `(c, 0, 0, 0)`, key `(seed, 0)`."""
    zero = np.zeros_like(counters)
    x = [counters.astype(np.uint64), zero, zero, zero]
    k0, k1 = seed % (1 << 64), 0
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) % (1 << 64), (k1 + PHILOX_W[1]) % (1 << 64)
        lo0, hi0 = mulhilo(PHILOX_M[0], x[0])
        lo1, hi1 = mulhilo(PHILOX_M[1], x[2])
        x = [hi1 ^ x[1] ^ np.uint64(k0), lo1, hi0 ^ x[3] ^ np.uint64(k1), lo0]
    return x


def unit_interval(word: np.ndarray) -> np.ndarray:
    """`(w >> 11) * 2^-53`: a uniform f64 on [0, 1) from a 64-bit word (numpy's `random()`)."""
    return (word >> np.uint64(11)).astype(np.float64) * 2.0**-53


def counters(op: rnd.RandomOperation, offset: np.ndarray | None, n: int) -> np.ndarray:
    """`offset * n + i` for i < n, wrapping in 64 bits."""
    base = np.uint64(0) if offset is None else np.asarray(offset).astype(np.int64).astype(np.uint64)
    with np.errstate(over="ignore"):
        return base * np.uint64(n) + np.arange(n, dtype=np.uint64)


def uniform01(op: rnd.RandomOperation, offset: np.ndarray | None, n: int, words: int = 1) -> list[np.ndarray]:
    """The first `words` uniforms on [0, 1) of the blocks of n consecutive counters."""
    blocks = philox_blocks(counters(op, offset, n), op.seed.value.data)
    return [unit_interval(w) for w in blocks[:words]]


def _rng_shape(op: rnd.RngOperation) -> tuple[list[int], int]:
    shape = list(op.result.type.get_shape())
    return shape, int(np.prod(shape, dtype=np.int64))


def run_rng_uniform(op: rnd.RngUniformOp, offset: np.ndarray | None = None) -> tuple[np.ndarray]:
    shape, n = _rng_shape(op)
    (u,) = uniform01(op, offset, n)
    low, high = op.low.value.data, op.high.value.data
    return (convert((low + (high - low) * u).reshape(shape), result_dtype(op)),)


def box_muller(u0: np.ndarray, u1: np.ndarray) -> np.ndarray:
    """Standard normals from two uniforms on [0, 1): `sqrt(-2 ln(1 - u0)) cos(2 pi u1)`."""
    return np.sqrt(-2.0 * np.log1p(-u0)) * np.cos(2.0 * np.pi * u1)


def run_rng_normal(op: rnd.RngNormalOp, offset: np.ndarray | None = None) -> tuple[np.ndarray]:
    shape, n = _rng_shape(op)
    u0, u1 = uniform01(op, offset, n, words=2)
    z = box_muller(u0, u1)
    return (convert((op.mean.value.data + op.std.value.data * z).reshape(shape), result_dtype(op)),)


def filtered_probabilities(logits: np.ndarray, temperature: float, top_k: int, top_p: float) -> np.ndarray:
    """Per row, the renormalised probabilities after temperature, top-k and top-p (f64).
    A row holding +inf gives its +inf ids equal probability (the softmax's limit)."""
    z = logits.astype(np.float64) / temperature
    rows, vocab = z.shape
    # rank[b, j]: how many ids come before j (larger, or equal with a lower index)
    order = np.argsort(-z, axis=-1, kind="stable")
    rank = np.empty_like(order)
    np.put_along_axis(rank, order, np.arange(vocab)[None, :].repeat(rows, 0), axis=-1)
    keep = rank < top_k if top_k > 0 else np.ones_like(z, dtype=bool)
    masked = np.where(keep, z, -np.inf)
    peak = masked.max(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):  # inf - inf where the peak is +inf: not taken
        p = np.where(np.isposinf(peak), np.isposinf(masked), np.exp(masked - peak))  # +inf: the limit
    p /= p.sum(axis=-1, keepdims=True)
    if top_p < 1:
        by_rank = np.take_along_axis(p, order, axis=-1)
        before = np.cumsum(by_rank, axis=-1) - by_rank
        kept_by_rank = before < top_p
        keep_p = np.take_along_axis(kept_by_rank, rank, axis=-1)
        p = np.where(keep_p, p, 0.0)
        p /= p.sum(axis=-1, keepdims=True)
    return p


def pick(p: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Per row, the first id whose cumulative probability exceeds `u` (the last kept id if
    rounding leaves none)."""
    cdf = np.cumsum(p, axis=-1)
    chosen = np.sum(cdf <= u[:, None], axis=-1)
    last_kept = p.shape[-1] - 1 - np.argmax((p > 0)[:, ::-1], axis=-1)
    return np.minimum(chosen, last_kept)


def check_rows(z: np.ndarray) -> None:
    """A row with a NaN, or all -inf, has no distribution: a run-time error here (as
    `torch.multinomial`); the backends return -1 for it (`docs/deviations.md`)."""
    peak = z.max(axis=-1)  # NaN when the row holds one
    for row in np.flatnonzero(~(peak > -np.inf)):
        what = "holds a NaN" if np.isnan(peak[row]) else "is all -inf"
        raise KernelError(f"row {row} of the logits {what}: there is no distribution to sample from")


def run_sample(op: rnd.SampleOp, logits: np.ndarray, offset: np.ndarray | None = None) -> tuple[np.ndarray]:
    temperature = op.temperature.value.data
    check_rows(logits.astype(np.float64) / (temperature or 1.0))
    if temperature == 0:
        return (np.argmax(logits.astype(np.float64), axis=-1).astype(np.int64),)
    p = filtered_probabilities(logits, temperature, op.top_k.value.data, op.top_p.value.data)
    (u,) = uniform01(op, offset, logits.shape[0])
    return (pick(p, u).astype(np.int64),)


KERNELS = {
    rnd.RngUniformOp: run_rng_uniform,
    rnd.RngNormalOp: run_rng_normal,
    rnd.SampleOp: run_sample,
}
