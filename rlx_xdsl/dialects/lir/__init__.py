"""The `lir` dialect: a MIR function plus its memory plan, in the IR.

LIR does not repeat MIR's ops. A planned function is the same `func.func` of MIR
ops, opened by a `lir.plan` op (the arena and the plan's figures) and annotated:
each value's placement in `lir.slot` (on its op, or in the function's argument
and result attributes) and each op's phase in `lir.phase` (`attrs`). The
verifier of `lir.plan` proves the plan (`proof`) from the live ranges the IR
implies (`liveness`).
"""

from __future__ import annotations

from xdsl.dialects import func
from xdsl.ir import Dialect

from rlx_xdsl.dialects.lir import attrs, plan
from rlx_xdsl.dialects.lir.plan import PlanOp
from rlx_xdsl.ir.emitter import OpNamespace, register_namespace

GROUPS = (plan,)
ALL_OPS = [op for group in GROUPS for op in group.OPS]
ALL_ATTRIBUTES = list(attrs.ATTRIBUTES)

LIR = Dialect("lir", ALL_OPS, ALL_ATTRIBUTES)
register_namespace("lir", lambda emitter: OpNamespace(emitter, LIR))


def plan_of(function: func.FuncOp) -> PlanOp | None:
    """The plan opening `function`'s body, or None when the function is not planned."""
    block = function.body.blocks.first
    first = block.first_op if block is not None else None
    return first if isinstance(first, PlanOp) else None
