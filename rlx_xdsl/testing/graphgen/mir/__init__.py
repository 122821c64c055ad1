"""Recipes of the MIR ops, one module per dialect group (as `dialects.mir.GROUPS`).

Importing a module registers its recipes in `graphgen.RECIPES`; `GROUPS` lists
them explicitly, in the order of `dialects.mir.GROUPS`.
"""

from rlx_xdsl.testing.graphgen.mir import (
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
