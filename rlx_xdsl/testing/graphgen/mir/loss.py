"""Recipes of the softmax-cross-entropy MIR ops; labels come from `roles.with_ids`.

The indexed ops draw labels shaped `[N]` or `[N, 1]`, and sometimes an `ignore_index`
among the classes, so that some rows are ignored.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import element_type, floats_of_rank, shape_of


def _logits(s: GraphState) -> SSAValue:
    """Float `[N, C]` logits, from the pool or new."""
    return s.pick(floats_of_rank(2)) or s.operand(s.shape(2, 2))


def _labels_shape(s: GraphState, n: int) -> tuple[int, ...]:
    return s.choice([(n,), (n, 1)])


def _ignore_index(s: GraphState, classes: int) -> int | None:
    return s.integer(0, classes - 1) if s.flag() else None


@RECIPES.register(SoftmaxCrossEntropyWithLogitsOp)
def sce_indexed(s: GraphState, op: OpClass) -> None:
    logits = _logits(s)
    n, c = shape_of(logits)
    operands = with_ids(s, op, _labels_shape(s, n), c, logits=logits)
    s.emit(op, *operands, ignore_index=_ignore_index(s, c))


@RECIPES.register(SoftmaxCrossEntropyOp)
def sce_dense(s: GraphState, op: OpClass) -> None:
    """Soft targets are plain data of the logits' shape and dtype."""
    logits = _logits(s)
    s.emit(op, logits, s.operand(shape_of(logits), element_type(logits)))


@RECIPES.register(SoftmaxCrossEntropyBackwardOp)
def sce_backward(s: GraphState, op: OpClass) -> None:
    logits = _logits(s)
    n, c = shape_of(logits)
    d_loss = s.operand((n,), element_type(logits))
    operands = with_ids(s, op, _labels_shape(s, n), c, logits=logits, d_loss=d_loss)
    s.emit(op, *operands, ignore_index=_ignore_index(s, c))
