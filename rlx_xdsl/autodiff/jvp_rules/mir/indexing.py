"""JVP rules of gather and scatter_add: linear in the table and the updates, indices held fixed."""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES
from rlx_xdsl.autodiff.jvp_rules.common import linear
from rlx_xdsl.dialects.mir.indexing import GatherOp, ScatterAddOp

JVP_RULES.register(GatherOp, ScatterAddOp)(linear)
