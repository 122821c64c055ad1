"""Recipes of the contraction MIR ops: matmul, dot_general, dense_solve."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp, DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp, ConstantOp, TanhOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, MAX_RANK, GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    broadcasts,
    element_type,
    float_min_rank,
    floats_of_rank,
    shape_of,
)


@RECIPES.register(MatmulOp)
def matmul(s: GraphState, op: OpClass) -> None:
    """The rhs comes from the pool when one fits, else it is a new `[k, n]` parameter."""
    a = s.need(float_min_rank(2))
    k, batch = shape_of(a)[-1], shape_of(a)[:-2]

    def fits(v: SSAValue) -> bool:
        vs = shape_of(v)
        return (
            float_min_rank(2)(v)
            and vs[-2] == k
            and element_type(v) == element_type(a)
            and broadcasts(vs[:-2], batch)
        )

    b = s.pick(fits) if s.flag() else None
    if b is None:
        b = s.operand((k, s.integer(1, MAX_DIM)), element_type(a), param=True)
    s.emit(op, a, b)


@RECIPES.register(DotGeneralOp)
def dot_general(s: GraphState, op: OpClass) -> None:
    """Random batch and contracting axes of the lhs; a new rhs laid out to match them."""
    a = s.need(float_min_rank(1))
    a_shape = shape_of(a)
    ra = len(a_shape)
    n_batch = s.integer(0, min(1, ra - 1))
    n_contract = s.integer(1, min(2, ra - n_batch))
    lhs_order = s.draw(st.permutations(range(ra)))
    lhs_batch = list(lhs_order[:n_batch])
    lhs_contracting = list(lhs_order[n_batch : n_batch + n_contract])
    # Keep the rhs rank and the result rank (batch + lhs free + rhs free) within MAX_RANK.
    room = min(MAX_RANK - (ra - n_contract), MAX_RANK - n_batch - n_contract)
    n_free = s.integer(0, min(2, room))
    rb = n_batch + n_contract + n_free
    rhs_order = s.draw(st.permutations(range(rb)))
    rhs_batch = list(rhs_order[:n_batch])
    rhs_contracting = list(rhs_order[n_batch : n_batch + n_contract])
    b_shape = [s.integer(1, MAX_DIM) for _ in range(rb)]
    for lhs_axis, rhs_axis in zip(lhs_batch + lhs_contracting, rhs_batch + rhs_contracting):
        b_shape[rhs_axis] = a_shape[lhs_axis]
    b = s.operand(tuple(b_shape), element_type(a), param=True)
    s.emit(
        op, a, b,
        lhs_contracting=lhs_contracting, rhs_contracting=rhs_contracting,
        lhs_batch=lhs_batch, rhs_batch=rhs_batch,
    )  # fmt: skip


@RECIPES.register(DenseSolveOp)
def dense_solve(s: GraphState, op: OpClass) -> None:
    """A = tanh(m) + (n+1)·I is strictly diagonally dominant, so never singular.

    (|tanh| <= 1 even for infinite m; a NaN in m only propagates into the result.)
    """
    rhs = s.pick(floats_of_rank(1, 2))
    if rhs is None:
        n = s.integer(1, MAX_DIM)
        rhs = s.operand((n,) if s.flag() else (n, s.integer(1, MAX_DIM)))
    n, et = shape_of(rhs)[0], element_type(rhs)
    m = s.operand((n, n), et)
    diagonal = s.emit(ConstantOp, dense(np.eye(n) * (n + 1), et))
    a = s.emit(AddOp, s.emit(TanhOp, m), diagonal)
    s.emit(op, a, rhs)


@RECIPES.register(BatchedDenseSolveOp)
def batched_dense_solve(s: GraphState, op: OpClass) -> None:
    """As `dense_solve`, per batch: `tanh(m) + (n+1)·I` is never singular."""
    rhs = s.pick(floats_of_rank(2, 3))
    if rhs is None:
        batch, n = s.integer(1, MAX_DIM), s.integer(1, MAX_DIM)
        rhs = s.operand((batch, n) if s.flag() else (batch, n, s.integer(1, MAX_DIM)))
    (batch, n, *_), et = shape_of(rhs), element_type(rhs)
    m = s.operand((batch, n, n), et)
    diagonal = s.emit(ConstantOp, dense(np.eye(n) * (n + 1), et))
    s.emit(op, s.emit(AddOp, s.emit(TanhOp, m), diagonal), rhs)
