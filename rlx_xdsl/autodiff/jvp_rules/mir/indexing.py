"""JVP rules of gather, scatter_add and dynamic_update_slice: linear in the table, the updates
and the operand and update, indices held fixed."""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES
from rlx_xdsl.autodiff.jvp_rules.common import linear
from rlx_xdsl.dialects.mir.indexing import DynamicUpdateSliceOp, GatherOp, ScatterAddOp

JVP_RULES.register(GatherOp, ScatterAddOp, DynamicUpdateSliceOp)(linear)
