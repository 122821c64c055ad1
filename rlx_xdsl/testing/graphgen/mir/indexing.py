"""Recipes of the indexing MIR ops; gather's and scatter_add's indices come from `roles.with_ids`,
dynamic_update_slice's starts are integer constants (some out of range: the op clamps them)."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.mir.indexing import DynamicUpdateSliceOp, GatherOp, ScatterAddOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_DIM, MAX_RANK, GraphState, dense
from rlx_xdsl.testing.graphgen.values import element_type, is_float, is_numeric, rank, shape_of


@RECIPES.register(GatherOp)
def gather(s: GraphState, op: OpClass) -> None:
    """Indices of rank 0-2 (keeping the result within MAX_RANK) into one axis of the table."""
    table = s.need(lambda v: rank(v) >= 1)
    shape = shape_of(table)
    axis = s.integer(0, len(shape) - 1)
    index_shape = s.shape(0, min(2, MAX_RANK + 1 - len(shape)))
    s.emit(op, *with_ids(s, op, index_shape, shape[axis], table=table), axis=axis)


def _float_rows(v: SSAValue) -> bool:
    return is_float(v) and rank(v) >= 1


@RECIPES.register(ScatterAddOp)
def scatter_add(s: GraphState, op: OpClass) -> None:
    """One index per row of the updates, into a new dim of 1..MAX_DIM rows."""
    updates = s.need(_float_rows)
    dim_size = s.integer(1, MAX_DIM)
    rows = (shape_of(updates)[0],)
    s.emit(op, *with_ids(s, op, rows, dim_size, updates=updates), dim_size=dim_size)


@RECIPES.register(DynamicUpdateSliceOp)
def dynamic_update_slice(s: GraphState, op: OpClass) -> None:
    """An update no larger than the operand on any dim; starts in `[-1, size]` (clamped)."""
    operand = s.need(is_numeric)
    shape = shape_of(operand)
    update = s.operand(tuple(s.integer(min(d, 1), d) for d in shape), element_type(operand))
    dtype = s.choice(("i32", "i64"))
    starts = [s.emit(ConstantOp, dense(s.integer(-1, d), dtype)) for d in shape]
    s.emit(op, operand, update, *starts)
