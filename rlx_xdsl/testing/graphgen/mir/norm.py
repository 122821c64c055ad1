"""Recipes of the normalisation MIR ops; gamma and beta are usually parameters."""

from __future__ import annotations

from rlx_xdsl.dialects.mir.elementwise import ExpOp
from rlx_xdsl.dialects.mir.norm import BatchNormInferenceOp, GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_RANK, GraphState
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    float_min_rank,
    rank,
    shape_of,
)


@RECIPES.register(LayerNormOp, RmsNormOp)
def last_axes_norm(s: GraphState, op: OpClass) -> None:
    """Normalises the dims from `axis` on; gamma and beta have exactly those dims."""
    x = s.need(float_min_rank(1))
    axis = s.axis(rank(x))
    normalized, et = shape_of(x)[axis:], element_type(x)
    gamma = s.operand(normalized, et, param=True)
    beta = s.operand(normalized, et, param=True)
    s.emit(op, x, gamma, beta, axis=axis, eps=s.choice((1e-5, 1e-6)))


@RECIPES.register(GroupNormOp)
def group_norm(s: GraphState, op: OpClass) -> None:
    """Channels are dim 1 of a rank >= 3 value; the group count divides them."""
    x = s.pick(float_min_rank(3))
    if x is None:
        x = s.operand(s.shape(3, MAX_RANK))
    channels, et = shape_of(x)[1], element_type(x)
    gamma = s.operand((channels,), et, param=True)
    beta = s.operand((channels,), et, param=True)
    s.emit(op, x, gamma, beta, num_groups=s.choice(divisors(channels)), eps=1e-5)


@RECIPES.register(BatchNormInferenceOp)
def batch_norm_inference(s: GraphState, op: OpClass) -> None:
    """Channels are dim 1 of a rank >= 2 value; the variance is `exp` of a value (positive)."""
    x = s.pick(float_min_rank(2))
    if x is None:
        x = s.operand(s.shape(2, MAX_RANK))
    channels, et = shape_of(x)[1], element_type(x)
    gamma, beta, mean = (s.operand((channels,), et, param=True) for _ in range(3))
    var = s.builder.emit(ExpOp(s.operand((channels,), et)))
    s.emit(op, x, gamma, beta, mean, var, eps=1e-5)
