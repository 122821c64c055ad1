"""JVP rules of the data-movement ops: each is linear, its tangent is the op on the tangents."""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES
from rlx_xdsl.autodiff.jvp_rules.common import linear
from rlx_xdsl.dialects.mir.shape import ConcatOp, ExpandOp, NarrowOp, ReshapeOp, TransposeOp

JVP_RULES.register(ReshapeOp, TransposeOp, ExpandOp, NarrowOp, ConcatOp)(linear)
"""A concat of some zero tangents concatenates zeros in their place."""
