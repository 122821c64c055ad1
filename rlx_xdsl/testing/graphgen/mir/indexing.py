"""Recipes of the indexing MIR ops; their indices come from `roles.with_ids`."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.indexing import GatherOp, ScatterAddOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_DIM, MAX_RANK, GraphState
from rlx_xdsl.testing.graphgen.values import is_float, rank, shape_of


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
