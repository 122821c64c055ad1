"""Lowering of the HIR norms (over the last axis, as RLX's `RmsNorm{axis: -1}`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Policy
from rlx_xdsl.dialects.hir.norm import ResidualRmsNormOp, RmsNormOp
from rlx_xdsl.ir.emitter import Emitter


@LOWERINGS.register(RmsNormOp)
def lower_rms_norm(e: Emitter, op: RmsNormOp, policy: Policy) -> Sequence[SSAValue]:
    return [e.mir.rms_norm(op.x, op.gamma, op.beta, axis=-1, eps=op.eps.value.data)]


@LOWERINGS.register(ResidualRmsNormOp)
def lower_residual_rms_norm(e: Emitter, op: ResidualRmsNormOp, policy: Policy) -> Sequence[SSAValue]:
    """`direct`: `mir.fused_residual_rms_norm`; `fusable`: `add` then `rms_norm`."""
    eps = op.eps.value.data
    if policy is Policy.DIRECT:
        return [e.mir.fused_residual_rms_norm(op.x, op.residual, op.gamma, op.beta, axis=-1, eps=eps)]
    summed = e.mir.add(op.x, op.residual)
    return [e.mir.rms_norm(summed, op.gamma, op.beta, axis=-1, eps=eps)]
