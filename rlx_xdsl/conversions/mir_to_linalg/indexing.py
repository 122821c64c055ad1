"""Lowering of MIR gather and scatter_add to `linalg.generic`, and of dynamic_update_slice
to `tensor.insert_slice` at its clamped starts.

Upstream linalg has no gather or scatter. gather reads the table with
`tensor.extract` at the id of each result position; scatter_add is a reduction
over the update rows, each adding into the output row its id names (a one-hot
contraction, which stays parallel over the output).

Ids are truncated toward zero (RLX's f32 ids), and one in `[-n, 0)` has `n` added
(it counts from the end, as in the interpreter). An id out of `[-n, n)` is an
interpreter error; here gather clamps it into the table and scatter_add drops
its row, so compiled code never reads outside a buffer.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, tensor
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import (
    PARALLEL,
    element_type,
    identity,
    loops,
)
from rlx_xdsl.dialects.mir import indexing as ix
from rlx_xdsl.dtypes import DType
from rlx_xdsl.shapes import normalize_axis


def row_of(s: Scalars, id_: SSAValue, id_dtype: DType, size: SSAValue) -> SSAValue:
    """The index of the slice `id_` names among `size`: truncated, `size` added if negative."""
    row = s.to_index(id_, id_dtype)
    negative = s.index_compare("lt", row, s.index_constant(0))
    return s.select(negative, s.emit(arith.AddiOp(row, size)), row)


@LOWERINGS.register(ix.GatherOp)
def lower_gather(lw: Lowering, op: ix.GatherOp) -> Sequence[SSAValue]:
    table, indices = op.table, op.indices
    table_dims, index_dims = lw.dims(table), lw.dims(indices)
    axis = normalize_axis(op.axis.value.data, len(table_dims))
    n_ids = len(index_dims)
    out_dims = [*table_dims[:axis], *index_dims, *table_dims[axis + 1 :]]
    rank = len(out_dims)
    size = lw.index_value(table_dims[axis])
    last_row = lw.emit(arith.SubiOp(size, lw.s.index_constant(1)))
    id_dtype = lw.operand_dtype(1)

    def body(s: Scalars, id_: SSAValue, _: SSAValue) -> SSAValue:
        row = row_of(s, id_, id_dtype, size)
        row = s.emit(arith.MaxSIOp(s.emit(arith.MinSIOp(row, last_row)), s.index_constant(0)))
        position = [s.loop_index(d) for d in range(axis)]
        position += [row] + [s.loop_index(d) for d in range(axis + n_ids, rank)]
        return s.emit(tensor.ExtractOp(table, position, element_type(table)))

    id_map = loops(rank, list(range(axis, axis + n_ids)))
    init = lw.empty(out_dims, lw.result_dtype())
    return lw.generic([(indices, id_map)], [(init, identity(rank))], [PARALLEL] * rank, body)


@LOWERINGS.register(ix.ScatterAddOp)
def lower_scatter_add(lw: Lowering, op: ix.ScatterAddOp) -> Sequence[SSAValue]:
    """`out[r, ...] = sum over m of (ids[m] == r ? updates[m, ...] : 0)`; loop m is last."""
    updates, indices = op.updates, op.indices
    rows, *rest = lw.dims(updates)
    dt, id_dtype = lw.result_dtype(), lw.operand_dtype(1)
    acc = accumulator(dt)
    n = len(rest) + 2
    m = n - 1

    size = lw.s.index_constant(op.dim_size.value.data)

    def body(s: Scalars, id_: SSAValue, update: SSAValue, total: SSAValue) -> SSAValue:
        hit = s.index_compare("eq", row_of(s, id_, id_dtype, size), s.loop_index(0))
        return s.add(total, s.select(hit, s.cast(update, dt, acc), s.constant(0, acc)), acc)

    inputs = [(indices, loops(n, [m])), (updates, loops(n, [m, *range(1, m)]))]
    out_dims = [op.dim_size.value.data, *rest, rows]
    result = lw.reduce(inputs, out_dims, [m], acc, 0, body)
    return [lw.convert(result, acc, dt)]


@LOWERINGS.register(ix.DynamicUpdateSliceOp)
def lower_dynamic_update_slice(lw: Lowering, op: ix.DynamicUpdateSliceOp) -> Sequence[SSAValue]:
    """`tensor.insert_slice` of the update at `clamp(start, 0, size - length)` on each dim."""
    sizes, lengths = lw.dims(op.operand), lw.dims(op.update)
    offsets = []
    for d, (start, size, length) in enumerate(zip(op.start_indices, sizes, lengths)):
        if isinstance(size, int) and size == length:
            offsets.append(0)  # the update fills the dim: the clamped start is 0
            continue
        at = lw.s.to_index(lw.extract_scalar(start), lw.operand_dtype(2 + d))
        if isinstance(size, int) and isinstance(length, int):
            room = lw.s.index_constant(size - length)
        else:
            room = lw.emit(arith.SubiOp(lw.index_value(size), lw.index_value(length)))
        offsets.append(lw.emit(arith.MaxSIOp(lw.emit(arith.MinSIOp(at, room)), lw.s.index_constant(0))))
    return [lw.insert_slice(op.update, op.operand, offsets, lengths)]
