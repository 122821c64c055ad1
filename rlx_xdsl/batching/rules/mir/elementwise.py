"""Batching rules of the elementwise group: every op with the `Elementwise` trait broadcasts."""

from rlx_xdsl.batching.emit import broadcasting
from rlx_xdsl.batching.registry import BATCH_RULES, NoBatchRule
from rlx_xdsl.dialects.mir import elementwise as group
from rlx_xdsl.dialects.traits import is_elementwise

NO_OPERANDS = NoBatchRule("it takes no operands, so it is never batched (it is copied as it is)")

for _op in group.OPS:
    BATCH_RULES.add(_op, broadcasting if is_elementwise(_op) else NO_OPERANDS)
