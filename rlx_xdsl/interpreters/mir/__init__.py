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
    norm,
    random,
    reduction,
    regions,
    shape,
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
    backward,
    regions,
    structured,
    fused,
    fused_regions,
    random,
    vision,
)
