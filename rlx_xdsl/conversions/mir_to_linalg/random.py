"""Lowering of MIR random numbers and sampling.

Philox-4x64-10 is written with `arith` on i64 (`arith.mului_extended` gives the
high word of each 64x64-bit product), so a lowered graph draws the same bits
as the interpreter (`interpreters/mir/random.py`): element i's counter is
`offset * n + i`, its linear position from `linalg.index`. Conversion to floats
and Box–Muller are f64 scalar code, rounded once to the result dtype.

`sample` ranks each row's logits as `topk`'s lowering does (O(V^2) per row),
keeps the top-k and top-p ids, and picks by comparing the row's draw with the
cumulative kept probabilities (in index order), all in f64.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Sequence

from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f64
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.reduction import row_ranks
from rlx_xdsl.conversions.mir_to_linalg.scalars import BOOL, I64, Scalars
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, Dim, identity, loops
from rlx_xdsl.dialects.mir import random as rnd
from rlx_xdsl.dtypes import dtype_named
from rlx_xdsl.interpreters.mir.random import PHILOX_M, PHILOX_W, ROUNDS

F64 = dtype_named("f64")
_WRAP = 1 << 64


def philox(s: Scalars, counter: SSAValue, seed: int) -> list[SSAValue]:
    """The four i64 words of Philox-4x64-10 for counter `(counter, 0, 0, 0)`, key `(seed, 0)`."""
    zero = s.constant(0, I64)
    x = [counter, zero, zero, zero]
    m0, m1 = (s.constant(m, I64) for m in PHILOX_M)
    k0, k1 = seed % _WRAP, 0
    for r in range(ROUNDS):
        if r:
            k0, k1 = (k0 + PHILOX_W[0]) % _WRAP, (k1 + PHILOX_W[1]) % _WRAP
        p0 = arith.MulUIExtendedOp(m0, x[0])
        p1 = arith.MulUIExtendedOp(m1, x[2])
        s.e.insert(p0)
        s.e.insert(p1)
        lo0, hi0 = p0.results
        lo1, hi1 = p1.results
        x = [
            _xor(s, _xor(s, hi1, x[1]), s.constant(k0, I64)),
            lo1,
            _xor(s, _xor(s, hi0, x[3]), s.constant(k1, I64)),
            lo0,
        ]
    return x


def _xor(s: Scalars, a: SSAValue, b: SSAValue) -> SSAValue:
    return s.emit(arith.XOrIOp(a, b))


def unit_interval(s: Scalars, word: SSAValue) -> SSAValue:
    """`(w >> 11) * 2^-53` in f64: uniform on [0, 1)."""
    top = s.emit(arith.ShRUIOp(word, s.constant(11, I64)))
    return s.mul(s.emit(arith.UIToFPOp(top, f64)), s.constant(2.0**-53, F64), F64)


def counter(s: Scalars, offset: SSAValue | None, n: Dim, position: SSAValue) -> SSAValue:
    """`offset * n + position` in wrapping i64 (`position` an i64)."""
    if offset is None:
        return position
    return s.add(s.mul(offset, s.count(n, I64), I64), position, I64)


def linear_position(s: Scalars, shape: Sequence[int]) -> SSAValue:
    """The row-major position of the current element of a generic over `shape`, as i64."""
    position = s.constant(0, I64)
    for d, size in enumerate(shape):
        index = s.from_index(s.loop_index(d), I64)
        position = s.add(s.mul(position, s.constant(size, I64), I64), index, I64)
    return position


def _rng(lw: Lowering, op: rnd.RngOperation, words: int, value) -> Sequence[SSAValue]:
    """A generic over the result writing `value(s, uniforms)` of each element's block."""
    shape = list(op.result.type.get_shape())
    rank, n, dt = len(shape), pymath.prod(shape), lw.result_dtype()
    seed = op.seed.value.data
    inputs = [] if op.offset is None else [(op.offset, loops(rank, []))]

    def body(s: Scalars, *args: SSAValue) -> SSAValue:
        offset = args[0] if op.offset is not None else None
        block = philox(s, counter(s, offset, n, linear_position(s, shape)), seed)
        return s.cast(value(s, [unit_interval(s, w) for w in block[:words]]), F64, dt)

    init = lw.empty(shape, dt)
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)


@LOWERINGS.register(rnd.RngUniformOp)
def lower_rng_uniform(lw: Lowering, op: rnd.RngUniformOp) -> Sequence[SSAValue]:
    low, high = op.low.value.data, op.high.value.data

    def value(s: Scalars, u: list[SSAValue]) -> SSAValue:
        return s.add(s.constant(low, F64), s.mul(s.constant(high - low, F64), u[0], F64), F64)

    return _rng(lw, op, 1, value)


def cos_turns(s: Scalars, u: SSAValue) -> SSAValue:
    """`cos(2 pi u)` for u in [0, 1), as an f64 polynomial (IREE's CPU target has no f64 `cos`).

    With `a = |u - round(u)|` in [0, 1/2] and `b = min(a, 1/2 - a)` in [0, 1/4],
    `cos(2 pi u) = ±cos(2 pi b)`; Taylor's series to x^26 on [0, pi/2] errs by < 1e-21.
    """
    half = s.constant(0.5, F64)
    a = s.abs(s.sub(u, s.emit(math.FloorOp(s.add(u, half, F64))), F64), F64)
    upper = s.compare("gt", a, s.constant(0.25, F64), F64)
    b = s.select(upper, s.sub(half, a, F64), a)
    x = s.mul(s.constant(2 * pymath.pi, F64), b, F64)
    x2 = s.mul(x, x, F64)
    series = s.constant((-1) ** 13 / pymath.factorial(26), F64)
    for n in range(12, -1, -1):
        series = s.add(s.mul(series, x2, F64), s.constant((-1) ** n / pymath.factorial(2 * n), F64), F64)
    return s.select(upper, s.neg(series, F64), series)


def box_muller(s: Scalars, u0: SSAValue, u1: SSAValue) -> SSAValue:
    """`sqrt(-2 ln(1 - u0)) * cos(2 pi u1)`."""
    radius = s.sqrt(s.mul(s.constant(-2.0, F64), s.emit(math.Log1pOp(s.neg(u0, F64))), F64))
    return s.mul(radius, cos_turns(s, u1), F64)


@LOWERINGS.register(rnd.RngNormalOp)
def lower_rng_normal(lw: Lowering, op: rnd.RngNormalOp) -> Sequence[SSAValue]:
    mean, std = op.mean.value.data, op.std.value.data

    def value(s: Scalars, u: list[SSAValue]) -> SSAValue:
        return s.add(s.constant(mean, F64), s.mul(s.constant(std, F64), box_muller(s, u[0], u[1]), F64), F64)

    return _rng(lw, op, 2, value)


# sample --------------------------------------------------------------------------------

ROW, ELEMENT = loops(2, [0]), identity(2)
"""Maps of a `[B, V]` loop nest: a per-row value, an element."""
AT_J, AT_L, ROW3 = loops(3, [0, 1]), loops(3, [0, 2]), loops(3, [0])
"""Maps of a `[B, V, V]` nest (row b, element j, other element l)."""


@LOWERINGS.register(rnd.SampleOp)
def lower_sample(lw: Lowering, op: rnd.SampleOp) -> Sequence[SSAValue]:
    dt = lw.operand_dtype(0)
    batch, vocab = dims = lw.dims(op.logits)
    ranks = row_ranks(lw, op.logits, dt)
    index = lambda s, d: s.from_index(s.loop_index(d), I64)  # noqa: E731
    temperature = op.temperature.value.data
    z = lw.map_elements([op.logits], dims, F64, lambda s, v, _: s.div(s.cast(v, dt, F64), s.constant(temperature or 1.0, F64), F64))
    peak = lw.reduce([(z, ELEMENT)], dims, [1], F64, -pymath.inf, lambda s, v, acc: s.max(v, acc, F64))

    def or_no_distribution(ids: SSAValue) -> SSAValue:
        """-1 for a row whose peak is NaN or -inf (a NaN in the row, or all -inf)."""
        def pick(s: Scalars, i: SSAValue, m: SSAValue, _: SSAValue) -> SSAValue:
            return s.select(s.compare("gt", m, s.constant(-pymath.inf, F64), F64), i, s.constant(-1, I64))

        return lw.map_elements([ids, peak], [batch], I64, pick)

    if temperature == 0:  # greedy: the id ranked first
        first = lambda s, r, acc: s.select(s.compare("eq", r, s.constant(0, I64), I64), index(s, 1), acc)  # noqa: E731
        return [or_no_distribution(lw.reduce([(ranks, ELEMENT)], dims, [1], I64, 0, first))]
    p = _filtered_probabilities(lw, op, z, peak, dims, ranks)

    def below_or_at(s: Scalars, v: SSAValue, acc: SSAValue) -> SSAValue:
        at_or_before = s.index_compare("le", s.loop_index(2), s.loop_index(1))
        return s.add(acc, s.select(at_or_before, v, s.constant(0.0, F64)), F64)

    cdf = lw.reduce([(p, AT_L)], [batch, vocab, vocab], [2], F64, 0.0, below_or_at)
    draws = _row_draws(lw, op, batch)

    def not_above(s: Scalars, c: SSAValue, u: SSAValue, acc: SSAValue) -> SSAValue:
        return s.add(acc, s.cast(s.compare("le", c, u, F64), BOOL, I64), I64)

    chosen = lw.reduce([(cdf, ELEMENT), (draws, ROW)], dims, [1], I64, 0, not_above)

    def last_kept(s: Scalars, v: SSAValue, acc: SSAValue) -> SSAValue:
        kept = s.compare("gt", v, s.constant(0.0, F64), F64)
        return s.select(kept, s.max(acc, index(s, 1), I64), acc)

    last = lw.reduce([(p, ELEMENT)], dims, [1], I64, 0, last_kept)
    return [or_no_distribution(lw.map_elements([chosen, last], [batch], I64, lambda s, a, b, _: s.min(a, b, I64)))]


def _filtered_probabilities(
    lw: Lowering, op: rnd.SampleOp, z: SSAValue, peak: SSAValue, dims: list[Dim], ranks: SSAValue
) -> SSAValue:
    """`[B, V]` f64 probabilities of the logits over the temperature `z` (row maxima `peak`)
    after top-k and top-p, renormalised; a row holding +inf spreads over its +inf ids."""
    top_k, top_p = op.top_k.value.data, op.top_p.value.data

    def weight(s: Scalars, v: SSAValue, rank: SSAValue, m: SSAValue, _: SSAValue) -> SSAValue:
        inf = s.constant(pymath.inf, F64)
        at_peak = s.select(s.compare("eq", v, inf, F64), s.constant(1.0, F64), s.constant(0.0, F64))
        e = s.select(s.compare("eq", m, inf, F64), at_peak, s.exp(s.sub(v, m, F64)))  # +inf: the limit
        if top_k == 0:
            return e
        return s.select(s.compare("lt", rank, s.constant(top_k, I64), I64), e, s.constant(0.0, F64))

    init = lw.empty(dims, F64)
    e = lw.generic([(z, ELEMENT), (ranks, ELEMENT), (peak, ROW)], [(init, ELEMENT)], [PARALLEL] * 2, weight)[0]
    p = _normalised(lw, e, dims)
    if top_p >= 1:
        return p

    def mass_before(s: Scalars, pl: SSAValue, rj: SSAValue, rl: SSAValue, acc: SSAValue) -> SSAValue:
        earlier = s.compare("lt", rl, rj, I64)
        return s.add(acc, s.select(earlier, pl, s.constant(0.0, F64)), F64)

    loops3 = [dims[0], dims[1], dims[1]]
    before = lw.reduce([(p, AT_L), (ranks, AT_J), (ranks, AT_L)], loops3, [2], F64, 0.0, mass_before)

    def nucleus(s: Scalars, v: SSAValue, b: SSAValue, _: SSAValue) -> SSAValue:
        return s.select(s.compare("lt", b, s.constant(top_p, F64), F64), v, s.constant(0.0, F64))

    return _normalised(lw, lw.map_elements([p, before], dims, F64, nucleus), dims)


def _normalised(lw: Lowering, w: SSAValue, dims: list[Dim]) -> SSAValue:
    """Each row of `w` divided by its sum."""
    total = lw.reduce([(w, ELEMENT)], dims, [1], F64, 0.0, lambda s, v, acc: s.add(acc, v, F64))
    init = lw.empty(dims, F64)
    divide = lambda s, v, t, _: s.div(v, t, F64)  # noqa: E731
    return lw.generic([(w, ELEMENT), (total, ROW)], [(init, ELEMENT)], [PARALLEL] * 2, divide)[0]


def _row_draws(lw: Lowering, op: rnd.SampleOp, batch: Dim) -> SSAValue:
    """`[B]` f64: row b's uniform draw on [0, 1), from counter `offset * B + b`."""
    seed = op.seed.value.data
    inputs = [] if op.offset is None else [(op.offset, loops(1, []))]

    def body(s: Scalars, *args: SSAValue) -> SSAValue:
        offset = args[0] if op.offset is not None else None
        position = s.from_index(s.loop_index(0), I64)
        return unit_interval(s, philox(s, counter(s, offset, batch, position), seed)[0])

    init = lw.empty([batch], F64)
    return lw.generic(inputs, [(init, identity(1))], [PARALLEL], body)[0]
