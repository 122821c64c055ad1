"""Lowering of MIR fused ops through their `rlx-unfuse` rules: the primitive chain, which
the walk then lowers. (IREE fuses the resulting generics again; an elementwise body
lowers to a single generic through `elementwise.lower_elementwise_body`.)"""

from __future__ import annotations

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, by_expansion
from rlx_xdsl.dialects.mir import fused
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES, load_rules

load_rules()
for _op in fused.OPS:
    if _op in UNFUSE_RULES and _op not in LOWERINGS:
        LOWERINGS.add(_op, by_expansion(UNFUSE_RULES[_op]))
