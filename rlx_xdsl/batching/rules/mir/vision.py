"""Batching rules of the vision ops: NCHW images and `[B, heads, L, D]` fold into B."""

from rlx_xdsl.batching.emit import folding
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.vision import AxialRope2dOp, ConvTranspose2dOp, LayerNorm2dOp, ResizeNearest2xOp

BATCH_RULES.add(LayerNorm2dOp, folding(0))
BATCH_RULES.add(ResizeNearest2xOp, folding(0))
BATCH_RULES.add(AxialRope2dOp, folding(0))
BATCH_RULES.add(ConvTranspose2dOp, folding(0))
