"""numpy kernels of the MIR ops, one module per dialect group.

Each module holds a `KERNELS` table keyed by op class (see
`interpreters.common.Kernel`); `GROUPS` lists them explicitly, in the order of
`dialects.mir.GROUPS`.
"""

from rlx_xdsl.interpreters.mir import (
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
