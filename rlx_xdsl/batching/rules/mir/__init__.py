"""Batching rules of the MIR ops, one module per group of `rlx_xdsl.dialects.mir.GROUPS`.

Each module registers its rules in `BATCH_RULES` when imported; `GROUPS` lists them
explicitly, in the dialect's order (the coverage test compares the two lists).
"""

from rlx_xdsl.batching.rules.mir import (
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
