"""Unfuse rules of the MIR fused ops: each emits the primitive chain the op stands for.

The chains match the fused kernels stage by stage (`interpreters/mir/fused.py`),
so unfusing never changes a value. Unlike RLX, `fused_swiglu` honours
`gate_first` and the residual norms keep their `axis`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.elementwise import activation_op
from rlx_xdsl.dialects.mir.fused import (
    ChainNotWritable,
    FusedAttentionBlockOp,
    FusedMatmulBiasActOp,
    FusedResidualLayerNormOp,
    FusedResidualNormOperation,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
    FusedTransformerLayerOp,
    attention_block_chain,
    transformer_layer_chain,
)
from rlx_xdsl.dialects.mir.norm import LayerNormOp, RmsNormOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, shape_of
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


@UNFUSE_RULES.register(FusedMatmulBiasActOp)
def unfuse_matmul_bias_act(e: Emitter, op: FusedMatmulBiasActOp) -> Sequence[SSAValue]:
    """`matmul`, `add` of the bias (broadcasting), then the activation op if any."""
    value = e.mir.add(e.mir.matmul(op.x, op.w), op.bias)
    if op.kind is not None:
        value = e.emit(activation_op(op.kind)(value))
    return [value]


@UNFUSE_RULES.register(FusedSwigluOp)
def unfuse_swiglu(e: Emitter, op: FusedSwigluOp) -> Sequence[SSAValue]:
    """Two `narrow`s of the last axis, `silu` of the gate half, `mul` by the up half, `cast`."""
    width = shape_of(op.x.type)[-1]
    if width == DYNAMIC:
        raise OpError(op, f"'{op.name}' cannot be unfused: the last dim is dynamic (narrow needs its size)")
    half = width // 2
    low = e.mir.narrow(op.x, axis=-1, start=0, len=half)
    high = e.mir.narrow(op.x, axis=-1, start=half, len=half)
    up, gate = (high, low) if op.is_gate_first else (low, high)
    value = e.mir.mul(e.mir.silu(gate), up)
    if op.cast_to is not None:
        value = e.mir.cast(value, op.cast_to)
    return [value]


def residual_sum(e: Emitter, op: FusedResidualNormOperation) -> SSAValue:
    """`x + residual (+ bias)` as `mir.add`s, in the fused kernel's order."""
    total = e.mir.add(op.x, op.residual)
    return total if op.bias is None else e.mir.add(total, op.bias)


def unfuse_residual_norm(e: Emitter, op: FusedResidualNormOperation, norm_class) -> Sequence[SSAValue]:
    """The residual adds, then the norm with the op's own axis and eps; the sum is the
    second result when the op keeps it."""
    total = residual_sum(e, op)
    norm = e.emit(norm_class(total, op.gamma, op.beta, axis=op.axis.value.data, eps=op.eps.value.data))
    return [norm, total] if op.keeps_sum else [norm]


@UNFUSE_RULES.register(FusedResidualRmsNormOp)
def unfuse_residual_rms_norm(e: Emitter, op: FusedResidualRmsNormOp) -> Sequence[SSAValue]:
    """The residual adds, then `rms_norm` (and the sum, when kept)."""
    return unfuse_residual_norm(e, op, RmsNormOp)


@UNFUSE_RULES.register(FusedResidualLayerNormOp)
def unfuse_residual_layer_norm(e: Emitter, op: FusedResidualLayerNormOp) -> Sequence[SSAValue]:
    """The residual adds, then `layer_norm` (and the sum, when kept)."""
    return unfuse_residual_norm(e, op, LayerNormOp)


def _operands_by_name(op) -> dict[str, SSAValue | None]:
    return {name: getattr(op, name) for name, _ in type(op).get_irdl_definition().operands}


@UNFUSE_RULES.register(FusedAttentionBlockOp)
def unfuse_attention_block(e: Emitter, op: FusedAttentionBlockOp) -> Sequence[SSAValue]:
    """The op's defining chain (`attention_block_chain`): projections, head split, rope, attention."""
    try:
        return attention_block_chain(e, op, **_operands_by_name(op))
    except ChainNotWritable as error:
        raise OpError(op, str(error)) from error


@UNFUSE_RULES.register(FusedTransformerLayerOp)
def unfuse_transformer_layer(e: Emitter, op: FusedTransformerLayerOp) -> Sequence[SSAValue]:
    """The op's defining chain (`transformer_layer_chain`): attention block, two post-norms, FFN."""
    try:
        return transformer_layer_chain(e, op, **_operands_by_name(op))
    except ChainNotWritable as error:
        raise OpError(op, str(error)) from error
