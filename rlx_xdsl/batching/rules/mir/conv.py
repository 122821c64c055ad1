"""Batching rules of convolution and pooling: NCHW images fold the batch into N
(a per-example filter maps the op over the batch)."""

from rlx_xdsl.batching.emit import folding
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp

BATCH_RULES.add(ConvOp, folding(0))
BATCH_RULES.add(PoolOp, folding(0))
