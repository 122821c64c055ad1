"""The `mir` dialect: RLX's tensor-op vocabulary.

Ops are grouped by concept, one module per group. Each module exports `OPS`
(and optionally `ATTRIBUTES`); this package gathers them into the `MIR` dialect.
"""

from xdsl.ir import Dialect

from rlx_xdsl.dialects.mir import (
    attention,
    attrs,
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

ALL_OPS = [op for group in GROUPS for op in group.OPS]
ALL_ATTRIBUTES = [*attrs.ATTRIBUTES] + [a for g in GROUPS for a in getattr(g, "ATTRIBUTES", [])]

MIR = Dialect("mir", ALL_OPS, ALL_ATTRIBUTES)
