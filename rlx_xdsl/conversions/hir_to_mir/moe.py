"""Lowering of `hir.moe_swiglu`: router, top-k and one pass of grouped matmuls per slot.

Tokens are flattened to `[T, D]`; the router's softmax feeds `mir.topk`, whose
i64 indices pick each token's expert for `mir.grouped_matmul` (slot j of every
token at once, so k passes over the expert weights rather than E). The slot
outputs are weighted by their (renormalised) router probability and summed.
`fusable` runs the gate and up projections as two grouped matmuls, `silu` and
`mul`; `direct` runs one on `[up | gate]` per expert feeding `mir.fused_swiglu`
(as `hir.swiglu`'s direct lowering).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.conv import reshape_dim
from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Policy
from rlx_xdsl.dialects.hir.moe import MoeSwigluOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of


@LOWERINGS.register(MoeSwigluOp)
def lower_moe_swiglu(e: Emitter, op: MoeSwigluOp, policy: Policy) -> Sequence[SSAValue]:
    mir = e.mir
    batch, seq, dim = shape_of(op.x.type)
    _, top_k, normalize = op.routing()
    tokens = mir.reshape(op.x, new_shape=[-1, dim])
    probs = mir.softmax(mir.matmul(tokens, op.router_w), axis=-1)
    weights, experts = mir.topk(probs, k=top_k)
    if normalize:
        weights = mir.div(weights, mir.reduce(weights, kind="sum", axes=[-1], keep_dim=True))
    if policy is Policy.DIRECT:
        up_gate = mir.concat(op.w_up, op.w_gate, axis=2)
    out = None
    for slot in range(top_k):
        expert = mir.reshape(mir.narrow(experts, axis=1, start=slot, len=1), new_shape=[-1])
        if policy is Policy.DIRECT:
            hidden = mir.fused_swiglu(mir.grouped_matmul(tokens, up_gate, expert))
        else:
            gate = mir.grouped_matmul(tokens, op.w_gate, expert)
            up = mir.grouped_matmul(tokens, op.w_up, expert)
            hidden = mir.mul(up, mir.silu(gate))  # the order `hir.swiglu` emits
        y = mir.grouped_matmul(hidden, op.w_down, expert)
        y = mir.mul(y, mir.narrow(weights, axis=1, start=slot, len=1))
        out = y if out is None else mir.add(out, y)
    return [mir.reshape(out, new_shape=[reshape_dim(batch), reshape_dim(seq), dim])]
