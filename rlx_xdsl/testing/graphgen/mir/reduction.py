"""Recipes of the reduction MIR ops: reduce, softmax, cumsum, topk."""

from __future__ import annotations

from hypothesis import strategies as st

from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp, TopkOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import float_min_rank, rank, shape_of


@RECIPES.register(ReduceOp)
def reduce(s: GraphState, op: OpClass) -> None:
    """Some distinct axes, each spelled positively or negatively."""
    x = s.need(float_min_rank(1))
    r = rank(x)
    chosen = s.draw(st.permutations(range(r)))[: s.integer(1, r)]
    axes = [a - r if s.flag() else a for a in chosen]
    kind = s.choice(("sum", "mean", "max", "min", "prod"))
    s.emit(op, x, kind=kind, axes=axes, keep_dim=s.flag())


@RECIPES.register(SoftmaxOp)
def softmax(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(1))
    s.emit(op, x, axis=s.axis(rank(x)))


@RECIPES.register(CumsumOp)
def cumsum(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(1))
    s.emit(op, x, axis=s.axis(rank(x)), exclusive=s.flag())


@RECIPES.register(TopkOp)
def topk(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(1))
    s.emit(op, x, k=s.integer(1, shape_of(x)[-1]))
