"""Recipes of the HIR projection blocks: linear, linear_fused, shared_linear_pair, swiglu."""

from __future__ import annotations

from rlx_xdsl.dialects.hir.linear import (
    LinearFusedOp,
    LinearOp,
    SharedLinearPairOp,
    SwigluOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.mir.fused import TAME_ACTIVATIONS
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, shape_of


@RECIPES.register(LinearOp, LinearFusedOp)
def linear(s: GraphState, op: OpClass) -> None:
    """`x[..., k]` from the pool, a new `[k, n]` weight, a bias of `[n]`, `[1, n]` or `[]`
    (optional for `hir.linear`) and an optional activation."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    n = s.integer(1, MAX_DIM)
    w = s.operand((k, n), et, param=True)
    bias = None
    if op is LinearFusedOp or s.flag():
        bias = s.operand(s.choice(((n,), (1, n), ())), et, param=True)
    s.emit(op, x, w, bias, activation=s.choice((None, *TAME_ACTIVATIONS)))


@RECIPES.register(SharedLinearPairOp)
def shared_linear_pair(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    w1 = s.operand((k, s.integer(1, MAX_DIM)), et, param=True)
    w2 = s.operand((k, s.integer(1, MAX_DIM)), et, param=True)
    s.emit(op, x, w1, w2)


@RECIPES.register(SwigluOp)
def swiglu(s: GraphState, op: OpClass) -> None:
    """Up and gate weights `[k, f]`, a down weight `[f, n]`."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    f, n = s.integer(1, MAX_DIM), s.integer(1, MAX_DIM)
    up, gate = (s.operand((k, f), et, param=True) for _ in range(2))
    s.emit(op, x, up, gate, s.operand((f, n), et, param=True))
