"""Recipe of `hir.moe_swiglu`: a few experts, top-1 up to all of them."""

from __future__ import annotations

from rlx_xdsl.dialects.hir.moe import MoeSwigluOp
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import element_type, floats_of_rank, shape_of


@RECIPES.register(MoeSwigluOp)
def moe_swiglu(s: GraphState, op: type) -> None:
    """x `[B, S, D]` (pool or new); a router and expert weights as new parameters."""
    x = s.pick(floats_of_rank(3))
    if x is None:
        x = s.operand(s.shape(3, 3))
    dim = shape_of(x)[2]
    et = element_type(x)
    experts = s.integer(1, 3)
    top_k, ffn = s.integer(1, experts), s.integer(1, MAX_DIM)

    def param(*shape: int):
        return s.operand(shape, et, param=True)

    weights = (param(dim, experts), param(experts, dim, ffn), param(experts, dim, ffn), param(experts, ffn, dim))
    s.emit(op, x, *weights, num_experts=experts, top_k=top_k, normalize_top_k=s.integer(0, 1) == 1)
