"""Recipes of the MIR mixture-of-experts and LoRA ops: weights and adapters are parameters."""

from __future__ import annotations

from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, is_float, rank, shape_of


@RECIPES.register(LoraMatmulOp)
def lora_matmul(s: GraphState, op: OpClass) -> None:
    """`x[..., k]` from the pool, new `[k, n]` weight, `[k, r]` and `[r, n]` adapters, a random scale."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    n, r = s.integer(1, MAX_DIM), s.integer(1, 3)
    w, a, b = (s.operand(shape, et, param=True) for shape in ((k, n), (k, r), (r, n)))
    s.emit(op, x, w, a, b, scale=s.choice((0.5, 1.0, 2.0)))


@RECIPES.register(GroupedMatmulOp)
def grouped_matmul(s: GraphState, op: OpClass) -> None:
    """`x[m, k]` from the pool (or new), `E` new `[k, n]` expert weights, an expert id per row."""
    x = s.pick(lambda v: is_float(v) and rank(v) == 2)
    if x is None:
        x = s.operand(s.shape(2, 2))
    m, k = shape_of(x)
    experts, n = s.integer(1, 3), s.integer(1, MAX_DIM)
    w = s.operand((experts, k, n), element_type(x), param=True)
    s.emit(op, *with_ids(s, op, (m,), experts, x=x, w=w))
