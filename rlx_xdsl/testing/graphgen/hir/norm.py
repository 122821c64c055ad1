"""Recipes of the HIR norms: gamma and beta cover the last dim (or broadcast from `[1]`)."""

from __future__ import annotations

from rlx_xdsl.dialects.hir.norm import ResidualRmsNormOp, RmsNormOp
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, shape_of


def _affine(s: GraphState, last: int, et) -> tuple:
    shape = s.choice(((last,), (1,)))
    return s.operand(shape, et, param=True), s.operand(shape, et, param=True)


@RECIPES.register(RmsNormOp)
def rms_norm(s: GraphState, op: type) -> None:
    x = s.need(float_min_rank(1))
    s.emit(op, x, *_affine(s, shape_of(x)[-1], element_type(x)), eps=s.choice((1e-5, 1e-6)))


@RECIPES.register(ResidualRmsNormOp)
def residual_rms_norm(s: GraphState, op: type) -> None:
    """A residual of x's exact shape and dtype (a layer's input)."""
    x = s.need(float_min_rank(1))
    shape, et = shape_of(x), element_type(x)
    residual = s.operand(shape, et)
    s.emit(op, x, residual, *_affine(s, shape[-1], et), eps=s.choice((1e-5, 1e-6)))
