"""Batching rules of the kernels with a body: each is batched as its unfuse rule's
primitive ops, each of those by its own rule (elementwise ops broadcast, the resize and
the concat take the batch axis in front), never one example at a time."""

from rlx_xdsl.batching.regions import through_unfuse_rule
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.fused_regions import OPS

for _op in OPS:
    BATCH_RULES.add(_op, through_unfuse_rule)
