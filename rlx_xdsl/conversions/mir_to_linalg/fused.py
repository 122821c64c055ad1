"""Lowering of MIR fused ops. `mir.elementwise_region` lowers straight to one
`linalg.generic` per result (its body is the generic's body); every other fused op goes
through its `rlx-unfuse` rule: the primitive chain, which the walk then lowers (IREE fuses
the resulting generics again)."""

from __future__ import annotations

from rlx_xdsl import layers
from rlx_xdsl.conversions.mir_to_linalg.elementwise import lower_elementwise_region
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, by_expansion
from rlx_xdsl.dialects.mir import fused, fused_regions
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES

LOWERINGS.add(fused_regions.ElementwiseRegionOp, lower_elementwise_region)

layers.load("unfuse")
for _op in (*fused.OPS, *fused_regions.OPS):
    if _op in UNFUSE_RULES and _op not in LOWERINGS:
        LOWERINGS.add(_op, by_expansion(UNFUSE_RULES[_op]))
