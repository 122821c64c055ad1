"""Lowering of `hir.attention` and `hir.rope`: one MIR op each, under both policies."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Policy
from rlx_xdsl.dialects.hir.attention import AttentionOp, RopeOp
from rlx_xdsl.ir.emitter import Emitter


@LOWERINGS.register(AttentionOp)
def lower_attention(e: Emitter, op: AttentionOp, policy: Policy) -> Sequence[SSAValue]:
    return [
        e.mir.attention(
            op.q,
            op.k,
            op.v,
            op.mask,
            num_heads=op.num_heads.value.data,
            head_dim=op.head_dim.value.data,
            mask_kind=op.kind,
            window=None if op.window is None else op.window.value.data,
        )
    ]


@LOWERINGS.register(RopeOp)
def lower_rope(e: Emitter, op: RopeOp, policy: Policy) -> Sequence[SSAValue]:
    return [e.mir.rope(op.x, op.cos, op.sin, head_dim=op.head_dim.value.data, n_rot=op.n_rot.value.data)]
