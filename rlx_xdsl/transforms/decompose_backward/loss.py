"""Decomposition of `softmax_cross_entropy_backward`: the same primitives as
`rlx-lower-softmax-cross-entropy` emits for it (one place for that rewrite)."""

from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyBackwardOp
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.lower_sce import lower_loss_backward

DECOMPOSITIONS.register(SoftmaxCrossEntropyBackwardOp)(lower_loss_backward)
