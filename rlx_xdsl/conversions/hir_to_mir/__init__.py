"""HIR -> MIR: `rlx-lower-hir` and the lowering of each block op, one module per HIR group.

`registry` holds the policy and the `LOWERINGS` table, `lower` the pass; the
group modules (imported here, as `dialects.hir.GROUPS`) register the lowerings.
"""

from rlx_xdsl.conversions.hir_to_mir import attention, blocks, conv, linear, moe, norm
from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Lowering, Policy

GROUPS = (linear, norm, attention, conv, blocks, moe)

__all__ = ["GROUPS", "LOWERINGS", "Lowering", "Policy"]
