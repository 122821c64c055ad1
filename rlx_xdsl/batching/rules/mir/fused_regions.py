"""Batching rules of the ops with elementwise bodies: mapped over the batch (their bodies
are typed per example)."""

from rlx_xdsl.batching.emit import map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.fused_regions import (
    BatchElementwiseRegionOp,
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
    TransformRegionOp,
)

BATCH_RULES.add(ElementwiseRegionOp, map_over_batch)
BATCH_RULES.add(FusedMatmulEpilogueOp, map_over_batch)
BATCH_RULES.add(TransformRegionOp, map_over_batch)
BATCH_RULES.add(BatchElementwiseRegionOp, map_over_batch)
