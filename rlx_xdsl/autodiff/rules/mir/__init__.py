"""VJP rules of the MIR ops, one module per group of `rlx_xdsl.dialects.mir.GROUPS`.

Each module registers its rules in `VJP_RULES` when imported. `GROUPS` lists
them explicitly, in the dialect's order, so a group without a rules module is
visible (the coverage test compares the two lists). A module may list in
`PENDING` the ops of its group that cannot be differentiated yet.
"""

from rlx_xdsl.autodiff.rules.mir import (
    attention,
    backward,
    contraction,
    conv,
    elementwise,
    fused,
    fused_regions,
    indexing,
    loss,
    moe,
    norm,
    quant,
    random,
    reduction,
    regions,
    shape,
    signal,
    splat,
    structured,
    vision,
)

GROUPS = (
    elementwise,
    contraction,
    shape,
    indexing,
    reduction,
    norm,
    attention,
    conv,
    loss,
    signal,
    backward,
    regions,
    structured,
    fused,
    fused_regions,
    quant,
    moe,
    random,
    vision,
    splat,
)

PENDING = {op: why for group in GROUPS for op, why in getattr(group, "PENDING", {}).items()}
"""MIR ops with neither a VJP rule nor an `rlx-prepare-ad` rewrite yet, and the issue that adds one."""
