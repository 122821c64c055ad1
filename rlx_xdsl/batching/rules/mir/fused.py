"""Batching rules of the fused ops: they batch as the chains they fuse."""

from rlx_xdsl.batching.emit import folding, leading_rule
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.fused import (
    FusedAttentionBlockOp,
    FusedMatmulBiasActOp,
    FusedResidualLayerNormOp,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
    FusedTransformerLayerOp,
)

BATCH_RULES.add(FusedMatmulBiasActOp, leading_rule(0))
BATCH_RULES.add(FusedSwigluOp, leading_rule(0))
BATCH_RULES.add(FusedResidualRmsNormOp, leading_rule(0, 1, axis="axis"))
BATCH_RULES.add(FusedResidualLayerNormOp, leading_rule(0, 1, axis="axis"))
BATCH_RULES.add(FusedAttentionBlockOp, folding(0))
BATCH_RULES.add(FusedTransformerLayerOp, folding(0))
