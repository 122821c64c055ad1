"""Decompositions of `cumsum_backward` and `gather_backward`.

* The reversed running sum is the total minus the forward running sum of the
  other kind: `sum_{j >= i} dy_j = sum(dy) - sum_{j < i} dy_j`, and the exclusive
  one subtracts the inclusive sum; no static length is needed.
* The gather gradient moves the indexed dims of dy to the front, flattens them to
  one row per index and adds the rows with `scatter_add`, then moves the table
  axis back.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.backward import CumsumBackwardOp, GatherBackwardOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, num_elements
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import reshape_to, shape_of, transposed


@DECOMPOSITIONS.register(CumsumBackwardOp)
def cumsum_backward(e: Emitter, op: CumsumBackwardOp) -> SSAValue:
    axis = op.normalized_axis()
    exclusive = op.exclusive is not None
    whole = e.mir.reduce(op.dy, kind="sum", axes=[axis], keep_dim=True)
    before = e.mir.cumsum(op.dy, axis=axis, exclusive=not exclusive)
    return e.mir.sub(whole, before)


@DECOMPOSITIONS.register(GatherBackwardOp)
def gather_backward(e: Emitter, op: GatherBackwardOp) -> SSAValue:
    axis = op.table_axis()
    index_shape = shape_of(op.indices)
    index_rank = len(index_shape)
    dy_shape = shape_of(op.dy)
    rank = len(dy_shape)
    index_axes = list(range(axis, axis + index_rank))
    moved = transposed(e, op.dy, [*index_axes, *(a for a in range(rank) if a not in index_axes)])
    count = num_elements(index_shape)
    rest = [d for a, d in enumerate(dy_shape) if a not in index_axes]
    rows = reshape_to(e, op, moved, [DYNAMIC if count is None else count, *rest])
    ids = op.indices if index_rank == 1 else e.mir.reshape(op.indices, new_shape=[-1])
    table = e.mir.scatter_add(rows, ids, dim_size=op.dim_size.value.data)
    table_rank = len(shape_of(table))
    return transposed(e, table, [*range(1, axis + 1), 0, *range(axis + 1, table_rank)])
