"""Batching rules of the Gaussian-splatting ops: mapped over the batch (a `mir.scan` with
one op per example). A batch of cameras (`meta`) or of scenes has no shared tile lists or
depth orders to exploit: each example bins, sorts and composites on its own, as one
render per camera would."""

from rlx_xdsl.batching.emit import map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir import splat

for _op in splat.OPS:
    BATCH_RULES.add(_op, map_over_batch)
