"""Batching rules of the structured ops.

`mir.scan`, `mir.scan_backward` and `mir.custom_fn` are mapped over the batch (a scan of
the per-example op). Mamba's selective scan and Gated DeltaNet take `[B, ...]` operands:
the batch folds into B (per-example `a` maps over the batch).
"""

from rlx_xdsl.batching.emit import folding, map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.structured import (
    CustomFnOp,
    GatedDeltaNetOp,
    ScanBackwardOp,
    ScanOp,
    SelectiveScanOp,
)

for _op in (ScanOp, ScanBackwardOp, CustomFnOp):
    BATCH_RULES.add(_op, map_over_batch)
BATCH_RULES.add(SelectiveScanOp, folding(0, 1, 3, 4))
BATCH_RULES.add(GatedDeltaNetOp, folding(0, 1, 2, 3, 4, 5))
