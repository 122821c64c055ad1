"""HIR -> MIR: `rlx-lower-hir` and the lowering of each block op, one module per HIR group.

`registry` holds the policy and the `LOWERINGS` table, `lower` the pass; the
group modules (`layers.HIR_GROUPS`, loaded by the pass) register the lowerings.
"""

from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Lowering, Policy

__all__ = ["LOWERINGS", "Lowering", "Policy"]
