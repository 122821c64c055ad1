"""Batching rules of the random ops: each example draws from its own counter offset (and a
sampled row's draw depends on its row), so they are mapped over the batch."""

from rlx_xdsl.batching.emit import map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.random import RngNormalOp, RngUniformOp, SampleOp

for _op in (RngUniformOp, RngNormalOp, SampleOp):
    BATCH_RULES.add(_op, map_over_batch)
