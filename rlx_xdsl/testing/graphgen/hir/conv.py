"""Recipe of `hir.depthwise_conv1d_causal`."""

from __future__ import annotations

from rlx_xdsl.dialects.hir.conv import DepthwiseConv1dCausalOp
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import element_type, floats_of_rank, shape_of


@RECIPES.register(DepthwiseConv1dCausalOp)
def depthwise_conv1d_causal(s: GraphState, op: type) -> None:
    """x `[B, S, C]` (pool or new); a `[C, 1, 1, K]` weight and a `[B, K-1, C]` left context.

    K >= 2 keeps empty tensors out of the pool (K = 1 is covered by the op's own tests).
    """
    x = s.pick(floats_of_rank(3))
    if x is None:
        x = s.operand(s.shape(3, 3))
    batch, _, channels = shape_of(x)
    et = element_type(x)
    kernel = s.integer(2, 3)
    w = s.operand((channels, 1, 1, kernel), et, param=True)
    s.emit(op, x, w, s.operand((batch, kernel - 1, channels), et), kernel_size=kernel)
