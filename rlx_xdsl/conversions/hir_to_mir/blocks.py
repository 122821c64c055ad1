"""Lowering of `hir.llama_decoder_block`: the primitive chain of one LLaMA layer (both policies).

The chain is the one `rlx_xdsl.testing.llama` builds (and RLX's
`lower_llama_decoder_block`): rms_norm, the q/k/v projections, heads split
with reshape + transpose, RoPE on q and k, grouped-query `repeat_kv` as
narrow + concat, causal attention, heads merged, the output projection and
residual; then rms_norm, the gate/up projections, silu, mul, the down
projection and residual.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.conv import reshape_dim
from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Policy
from rlx_xdsl.dialects.hir.blocks import LlamaDecoderBlockOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of


class _Layer:
    """The block op being expanded and the emitter, with the layer's dims at hand."""

    def __init__(self, e: Emitter, op: LlamaDecoderBlockOp):
        self.e, self.op = e, op
        self.heads, self.kv_heads, self.head_dim = op.heads()
        batch, seq, _ = shape_of(op.x.type)
        self.batch, self.seq = reshape_dim(batch), reshape_dim(seq)
        self.eps = op.eps.value.data

    def rms_norm(self, x: SSAValue, gamma: SSAValue, beta: SSAValue) -> SSAValue:
        return self.e.mir.rms_norm(x, gamma, beta, axis=-1, eps=self.eps)

    def split_heads(self, x: SSAValue, heads: int) -> SSAValue:
        """`[B, S, heads*hd]` -> `[B, heads, S, hd]`."""
        x = self.e.mir.reshape(x, new_shape=[self.batch, self.seq, heads, self.head_dim])
        return self.e.mir.transpose(x, perm=[0, 2, 1, 3])

    def merge_heads(self, x: SSAValue) -> SSAValue:
        """`[B, H, S, hd]` -> `[B, S, H*hd]`."""
        x = self.e.mir.transpose(x, perm=[0, 2, 1, 3])
        return self.e.mir.reshape(x, new_shape=[self.batch, self.seq, self.heads * self.head_dim])

    def repeat_kv(self, x: SSAValue) -> SSAValue:
        """`[B, Hkv, S, hd]` -> `[B, H, S, hd]`: kv head j serves query heads `j*rep .. j*rep+rep-1`."""
        rep = self.heads // self.kv_heads
        if rep == 1:
            return x
        kv = [self.e.mir.narrow(x, axis=1, start=j, len=1) for j in range(self.kv_heads)]
        return self.e.mir.concat(*[head for head in kv for _ in range(rep)], axis=1)

    def attention(self, x: SSAValue) -> SSAValue:
        """`x + attention(...) @ o_w`."""
        op, mir = self.op, self.e.mir
        h = self.rms_norm(x, op.ln1_g, op.ln1_b)
        q, k, v = (mir.matmul(h, w) for w in (op.q_w, op.k_w, op.v_w))
        rope = {"head_dim": self.head_dim, "n_rot": self.head_dim}
        q = mir.rope(self.split_heads(q, self.heads), op.cos, op.sin, **rope)
        k = mir.rope(self.split_heads(k, self.kv_heads), op.cos, op.sin, **rope)
        v = self.split_heads(v, self.kv_heads)
        window = None if op.window is None else op.window.value.data
        a = mir.attention(
            q, self.repeat_kv(k), self.repeat_kv(v), op.mask,
            num_heads=self.heads, head_dim=self.head_dim, mask_kind=op.kind, window=window,
        )  # fmt: skip
        return mir.add(x, mir.matmul(self.merge_heads(a), op.o_w))

    def feed_forward(self, x: SSAValue) -> SSAValue:
        """`x + (silu(n @ gate_w) * (n @ up_w)) @ down_w` with `n = rms_norm(x)`."""
        op, mir = self.op, self.e.mir
        h = self.rms_norm(x, op.ln2_g, op.ln2_b)
        gate = mir.matmul(h, op.gate_w)
        up = mir.matmul(h, op.up_w)
        return mir.add(x, mir.matmul(mir.mul(mir.silu(gate), up), op.down_w))


@LOWERINGS.register(LlamaDecoderBlockOp)
def lower_llama_decoder_block(e: Emitter, op: LlamaDecoderBlockOp, policy: Policy) -> Sequence[SSAValue]:
    layer = _Layer(e, op)
    return [layer.feed_forward(layer.attention(op.x))]
