"""Batching rules of the mixture-of-experts ops: LoRA takes any leading dims of x; the
grouped matmuls route rows, so the batch folds into the rows of x and the expert ids."""

from rlx_xdsl.batching.emit import folding, leading_rule, map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp, LoraMatmulOp

BATCH_RULES.add(LoraMatmulOp, leading_rule(0))
BATCH_RULES.add(GroupedMatmulOp, folding(0, 2))
BATCH_RULES.add(DequantGroupedMatmulOp, folding(0, 4))
BATCH_RULES.add(DequantMoeWeightsOp, map_over_batch)
