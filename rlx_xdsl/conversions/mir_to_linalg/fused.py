"""Lowering of MIR fused ops. `mir.elementwise_region` lowers straight to one
`linalg.generic` per result (its body is the generic's body); every other fused op goes
through its `rlx-unfuse` rule: the primitive chain, which the walk then lowers (IREE fuses
the resulting generics again). So do a region with a prologue (the resize's broadcast
generic feeds the body's generic), `mir.transform_region` and
`mir.batch_elementwise_region`: linalg has no `floordiv` indexing IREE tiles, so the
resize stays a broadcast and the slices a concat of generics."""

from __future__ import annotations

from rlx_xdsl import layers
from rlx_xdsl.conversions.mir_to_linalg.elementwise import lower_elementwise_region
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, by_expansion
from rlx_xdsl.dialects.mir import fused, fused_regions
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


def _lower_region(lw, op: fused_regions.ElementwiseRegionOp):
    if op.prologue is not None:
        return by_expansion(UNFUSE_RULES[fused_regions.ElementwiseRegionOp])(lw, op)
    return lower_elementwise_region(lw, op)


LOWERINGS.add(fused_regions.ElementwiseRegionOp, _lower_region)

layers.load("unfuse")
for _op in (*fused.OPS, *fused_regions.OPS):
    if _op in UNFUSE_RULES and _op not in LOWERINGS:
        LOWERINGS.add(_op, by_expansion(UNFUSE_RULES[_op]))
