"""Batching rules of the softmax cross-entropies: per-row losses, so the batch folds into
the rows of every operand."""

from rlx_xdsl.batching.emit import folding
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)

BATCH_RULES.add(SoftmaxCrossEntropyWithLogitsOp, folding(0, 1))
BATCH_RULES.add(SoftmaxCrossEntropyOp, folding(0, 1))
BATCH_RULES.add(SoftmaxCrossEntropyBackwardOp, folding(0, 1, 2))
