"""Lowering of the HIR projection blocks: linear layers, the shared pair, SwiGLU."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.registry import (
    LOWERINGS,
    Policy,
    block_location,
    located,
)
from rlx_xdsl.dialects.hir.linear import (
    LinearFusedOp,
    LinearOp,
    LinearOperation,
    SharedLinearPairOp,
    SwigluOp,
)
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import activation_op
from rlx_xdsl.ir.emitter import Emitter


def fused_linear(e: Emitter, op: LinearOperation) -> SSAValue:
    """`mir.fused_matmul_bias_act`, keeping any activation (as RLX's Direct does)."""
    return e.mir.fused_matmul_bias_act(op.x, op.w, op.bias, activation=op.kind)


def linear_chain(e: Emitter, op: LinearOperation) -> SSAValue:
    """`matmul` -> `add(bias)`? -> activation?: the chain `fuse_matmul_bias_act` matches."""
    y = e.mir.matmul(op.x, op.w)
    if op.bias is not None:
        y = e.mir.add(y, op.bias)
    if op.kind is not None:
        y = e.emit(activation_op(op.kind)(y))
    return y


@LOWERINGS.register(LinearOp)
def lower_linear(e: Emitter, op: LinearOp, policy: Policy) -> Sequence[SSAValue]:
    """`direct` fuses a layer with a bias; one without a bias is a plain chain under both policies."""
    if policy is Policy.DIRECT and op.bias is not None:
        return [fused_linear(e, op)]
    return [linear_chain(e, op)]


@LOWERINGS.register(LinearFusedOp)
def lower_linear_fused(e: Emitter, op: LinearFusedOp, policy: Policy) -> Sequence[SSAValue]:
    """Always the fused op: the author asked for it (RLX's `LinearFused`)."""
    return [fused_linear(e, op)]


@LOWERINGS.register(SharedLinearPairOp)
def lower_shared_linear_pair(e: Emitter, op: SharedLinearPairOp, policy: Policy) -> Sequence[SSAValue]:
    """Two matmuls of the same x, labelled `<label>[0]` and `<label>[1]` as RLX's two slots."""
    label = op.block_label()
    return [
        e.emit(located(MatmulOp(op.x, w), block_location(op, f"{label}[{slot}]")))
        for slot, w in enumerate((op.w1, op.w2))
    ]


@LOWERINGS.register(SwigluOp)
def lower_swiglu(e: Emitter, op: SwigluOp, policy: Policy) -> Sequence[SSAValue]:
    """`direct`: one projection on `[up_w | gate_w]` feeding `mir.fused_swiglu` (up is the low
    half). `fusable`: `x @ up_w`, `x @ gate_w`, `silu`, `mul`, as RLX's `swiglu_ffn` builds it."""
    if policy is Policy.DIRECT:
        weights = e.mir.concat(op.up_w, op.gate_w, axis=1)
        hidden = e.mir.fused_swiglu(e.mir.matmul(op.x, weights))
    else:
        up = e.mir.matmul(op.x, op.up_w)
        gate = e.mir.matmul(op.x, op.gate_w)
        hidden = e.mir.mul(up, e.mir.silu(gate))
    return [e.mir.matmul(hidden, op.down_w)]
