"""A memory-planned (LIR) function lowers like its MIR: the plan describes the arena of
RLX's executor, and upstream MLIR and IREE allocate buffers their own way, so `lir.plan`
is dropped (and `lowering.py` drops the `lir.*` placements on values and ops)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.dialects.lir.plan import PlanOp


@LOWERINGS.register(PlanOp)
def drop_plan(lw: Lowering, op: PlanOp) -> Sequence[SSAValue]:
    return []
