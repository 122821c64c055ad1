"""Lowering of MIR reductions and scans to `linalg.generic` reductions.

f16/bf16 accumulate in f32 and round the result once, as the interpreter does.
linalg has no scan or sort, so cumsum and topk are written as reductions with an
extra loop (`out[i] = sum over j of x[j] if j <= i`; the rank of each element
among its row, then a selection of the elements ranked 0..k-1). Both cost
O(n^2) along their axis, which stays parallel over everything else.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.conversions.mir_to_linalg.scalars import (
    BOOL,
    I64,
    Scalars,
    accumulator,
    highest_value,
    lowest_value,
)
from rlx_xdsl.conversions.mir_to_linalg.tensors import Tensors, identity, loops
from rlx_xdsl.dialects.mir import reduction as red
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dtypes import DType

_IDENTITY = {ReduceKind.SUM: 0, ReduceKind.MEAN: 0, ReduceKind.PROD: 1}

_COMBINE = {
    ReduceKind.SUM: Scalars.add,
    ReduceKind.MEAN: Scalars.add,
    ReduceKind.PROD: Scalars.mul,
    ReduceKind.MAX: Scalars.max,
    ReduceKind.MIN: Scalars.min,
}


def reduce_axes(
    lw: Tensors, x: SSAValue, dt: DType, axes: Sequence[int], kind: ReduceKind
) -> tuple[SSAValue, DType]:
    """`x` reduced over `axes` with `kind` (mean included); returns the result and its
    dtype (the accumulator dtype of `dt`; i64 for an integer mean, which sums in 64 bits
    as the interpreter does). The reduced dims are dropped."""
    integer = not dt.is_float and dt.kind != "complex"
    acc = I64 if kind == ReduceKind.MEAN and integer else accumulator(dt)
    dims = lw.dims(x)
    start = {ReduceKind.MAX: lowest_value(acc), ReduceKind.MIN: highest_value(acc)}.get(
        kind, _IDENTITY.get(kind)
    )
    combine = _COMBINE[kind]

    def body(s: Scalars, element: SSAValue, total: SSAValue) -> SSAValue:
        return combine(s, total, s.cast(element, dt, acc), acc)

    result = lw.reduce([(x, identity(len(dims)))], dims, axes, acc, start, body)
    if kind == ReduceKind.MEAN:
        count = lw.product([dims[a] for a in axes])
        result = lw.map_elements(
            [result],
            lw.dims(result),
            acc,
            lambda s, t, _: s.div(t, s.count(count, acc), acc),
        )
    return result, acc


def keep_reduced_dims(lw: Tensors, value: SSAValue, rank: int, axes: Sequence[int]) -> SSAValue:
    """Reinsert the reduced axes of a rank-`rank` input as size-1 dims (`keep_dim`)."""
    kept = [i for i in range(rank) if i not in axes]
    value_dims = lw.dims(value)
    out = [value_dims[kept.index(i)] if i in kept else 1 for i in range(rank)]
    if not kept:  # everything was reduced: a rank-0 value becomes all ones
        return lw.expand(value, [], out)
    groups: list[list[int]] = [[] for _ in kept]
    for i in range(rank):
        # A reduced axis joins the group of the kept axis before it (or the first one).
        groups[max((g for g, k in enumerate(kept) if k <= i), default=0)].append(i)
    return lw.expand(value, groups, out)


@LOWERINGS.register(red.ReduceOp)
def lower_reduce(lw: Lowering, op: red.ReduceOp) -> Sequence[SSAValue]:
    """A max/min (or integer mean) over a static zero-size axis is a located error: the
    interpreter refuses it at run time and there is no value to return."""
    dt = lw.result_dtype()
    axes = op.normalized_axes()
    if (refusal := op.zero_size_refusal()) is not None:
        raise LoweringError(refusal)
    result, acc = reduce_axes(lw, op.input, dt, axes, op.kind.data)
    result = lw.convert(result, acc, dt)
    if op.keep_dim is not None:
        result = keep_reduced_dims(lw, result, op.input.type.get_num_dims(), axes)
    return [result]


def softmax(lw: Tensors, x: SSAValue, dt: DType, axis: int) -> tuple[SSAValue, DType]:
    """`exp(x - max) / sum(exp(x - max))` along `axis`, in the accumulator dtype of `dt`."""
    acc = accumulator(dt)
    dims = lw.dims(x)
    rank = len(dims)
    row = loops(rank, [i for i in range(rank) if i != axis])
    peak = lw.reduce(
        [(x, identity(rank))], dims, [axis], acc, lowest_value(acc),
        lambda s, v, best: s.max(best, s.cast(v, dt, acc), acc),
    )  # fmt: skip

    def shifted_exp(s: Scalars, v: SSAValue, m: SSAValue) -> SSAValue:
        return s.exp(s.sub(s.cast(v, dt, acc), m, acc))

    total = lw.reduce(
        [(x, identity(rank)), (peak, row)], dims, [axis], acc, 0,
        lambda s, v, m, t: s.add(t, shifted_exp(s, v, m), acc),
    )  # fmt: skip
    init = lw.empty(dims, acc)
    out = lw.generic(
        [(x, identity(rank)), (peak, row), (total, row)],
        [(init, identity(rank))],
        ["parallel"] * rank,
        lambda s, v, m, t, _: s.div(shifted_exp(s, v, m), t, acc),
    )[0]
    return out, acc


@LOWERINGS.register(red.SoftmaxOp)
def lower_softmax(lw: Lowering, op: red.SoftmaxOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    result, acc = softmax(lw, op.input, dt, op.normalized_axis())
    return [lw.convert(result, acc, dt)]


@LOWERINGS.register(red.CumsumOp)
def lower_cumsum(lw: Lowering, op: red.CumsumOp) -> Sequence[SSAValue]:
    """`out[.., i, ..] = sum over j of x[.., j, ..]` for j <= i (j < i when exclusive); loop j is last."""
    dt = lw.result_dtype()
    acc = accumulator(dt)
    axis = op.normalized_axis()
    dims = lw.dims(op.input)
    rank = len(dims)
    inclusive = "gt" if op.exclusive is not None else "ge"

    def body(s: Scalars, v: SSAValue, total: SSAValue) -> SSAValue:
        taken = s.index_compare(inclusive, s.loop_index(axis), s.loop_index(rank))
        return s.add(total, s.select(taken, s.cast(v, dt, acc), s.constant(0, acc)), acc)

    x_map = loops(rank + 1, [rank if i == axis else i for i in range(rank)])
    result = lw.reduce([(op.input, x_map)], [*dims, dims[axis]], [rank], acc, 0, body)
    return [lw.convert(result, acc, dt)]


def _before(s: Scalars, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
    """`a` sorts strictly before `b` in a descending order where NaN is the largest value."""
    greater = s.compare("gt", a, b, dt)
    if not dt.is_float:
        return greater
    nan_first = s.mul(s.is_nan(a), s.logical_not(s.is_nan(b)), BOOL)
    return s.add(greater, nan_first, BOOL)


def _same(s: Scalars, a: SSAValue, b: SSAValue, dt: DType) -> SSAValue:
    equal = s.compare("eq", a, b, dt)
    if not dt.is_float:
        return equal
    return s.add(equal, s.mul(s.is_nan(a), s.is_nan(b), BOOL), BOOL)


def row_ranks(lw: Tensors, x: SSAValue, dt: DType) -> SSAValue:
    """For each element, how many elements of its row (last axis) sort before it in
    descending order (NaN largest; ties: lower index first), as i64. O(n^2) per row."""
    dims = lw.dims(x)
    r = len(dims)
    lead = list(range(r - 1))

    def count_before(s: Scalars, v: SSAValue, other: SSAValue, n: SSAValue) -> SSAValue:
        j, l = s.loop_index(r - 1), s.loop_index(r)
        ahead = s.add(
            _before(s, other, v, dt), s.mul(_same(s, other, v, dt), s.index_compare("lt", l, j), BOOL), BOOL
        )
        return s.add(n, s.cast(ahead, BOOL, I64), I64)

    return lw.reduce(
        [(x, loops(r + 1, [*lead, r - 1])), (x, loops(r + 1, [*lead, r]))],
        [*dims, dims[-1]],
        [r],
        I64,
        0,
        count_before,
    )


@LOWERINGS.register(red.TopkOp)
def lower_topk(lw: Lowering, op: red.TopkOp) -> Sequence[SSAValue]:
    """Rank every element of a row (how many sort before it; ties: lower index first),
    then pick the elements ranked 0 .. k-1."""
    dt = lw.operand_dtype(0)
    x = op.input
    dims = lw.dims(x)
    r = len(dims)
    lead = list(range(r - 1))
    ranks = row_ranks(lw, x, dt)
    k = op.k.value.data

    def pick(chosen: Callable[[Scalars, SSAValue], SSAValue]):
        """A selection of the element ranked like the output position: its value or its index."""

        def body(s: Scalars, v: SSAValue, rank: SSAValue, current: SSAValue) -> SSAValue:
            hit = s.compare("eq", rank, s.from_index(s.loop_index(r - 1), I64), I64)
            return s.select(hit, chosen(s, v), current)

        return body

    selected = [(x, loops(r + 1, [*lead, r])), (ranks, loops(r + 1, [*lead, r]))]
    out_loops = [*dims[:-1], k, dims[-1]]
    values = lw.reduce(selected, out_loops, [r], dt, 0, pick(lambda s, v: v))
    indices = lw.reduce(
        selected, out_loops, [r], I64, 0, pick(lambda s, v: s.from_index(s.loop_index(r), I64))
    )
    return [values, indices]
