"""Decompositions of `rope_backward` and `attention_backward`.

Attention's gradient replays the forward with matmuls, keeping the pieces it
needs, with `P` the attention weights and `T` the (soft-capped) logits:

    dV = P^T dy        dP = dy V^T        dT = P (dP - rowsum(dP P))
    dS = dT (1 - tanh^2(S / cap)) scale   dQ = dS K        dK = dS^T Q

Grouped KV heads are repeated for the query heads (reshape + expand) and their
gradients summed back per KV head. Positional masks are built from `mir.iota`
ramps of the query and key positions, so they need static sequence lengths;
a row whose keys are all masked gets zero weights, as the kernel.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.attention import MaskKind
from rlx_xdsl.dialects.mir.backward import (
    AttentionBackwardOp,
    AttentionWrt,
    RopeBackwardOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import (
    dtype_of,
    logical_and,
    require_static,
    reshape_to,
    scalar,
    shape_of,
    swap_last,
    total,
)


@DECOMPOSITIONS.register(RopeBackwardOp)
def rope_backward(e: Emitter, op: RopeBackwardOp) -> SSAValue:
    """`[d1 cos + d2 sin, d2 cos - d1 sin, rest]` along the last axis."""
    half, head_dim = op.n_rot.value.data // 2, op.head_dim.value.data
    d1 = e.mir.narrow(op.dy, axis=-1, start=0, len=half)
    d2 = e.mir.narrow(op.dy, axis=-1, start=half, len=half)
    parts = [
        e.mir.add(e.mir.mul(d1, op.cos), e.mir.mul(d2, op.sin)),
        e.mir.sub(e.mir.mul(d2, op.cos), e.mir.mul(d1, op.sin)),
    ]
    if head_dim > 2 * half:
        parts.append(e.mir.narrow(op.dy, axis=-1, start=2 * half, len=head_dim - 2 * half))
    return e.mir.concat(*parts, axis=-1)


class AttentionReplay:
    """The forward of one `attention_backward`, replayed with primitives up to the weights `P`."""

    def __init__(self, e: Emitter, op: AttentionBackwardOp):
        self.e, self.op = e, op
        self.heads = op.num_heads.value.data
        self.kv_heads = shape_of(op.k)[1]
        require_static(op, "the k/v head count of k", [self.kv_heads])
        self.scale = scalar(e, op.scale(), op.q)
        self.k = self.repeat_heads(op.k)
        self.v = self.repeat_heads(op.v)
        self.scores = e.mir.mul(e.mir.matmul(op.q, swap_last(e, self.k)), self.scale)
        self.capped = None
        logits = self.scores
        if op.attn_logit_softcap is not None:
            cap = scalar(e, op.attn_logit_softcap.value.data, op.q)
            self.capped = e.mir.tanh(e.mir.div(self.scores, cap))
            logits = e.mir.mul(cap, self.capped)
        self.weights = self.masked_softmax(logits)

    def repeat_heads(self, kv: SSAValue) -> SSAValue:
        """`[B, Hkv, S, D]` -> `[B, H, S, D]`: KV head `j` serves query heads `j*r .. j*r + r-1`."""
        repeats = self.heads // self.kv_heads
        if repeats == 1:
            return kv
        batch, kv_heads, seq, dim = shape_of(kv)
        grouped = reshape_to(self.e, self.op, kv, [batch, kv_heads, 1, seq, dim])
        spread = self.e.mir.expand(grouped, target_shape=[-1, -1, repeats, -1, -1])
        return reshape_to(self.e, self.op, spread, [batch, self.heads, seq, dim])

    def sum_heads(self, grad: SSAValue) -> SSAValue:
        """The inverse of `repeat_heads` for gradients: sum each KV head's query heads."""
        repeats = self.heads // self.kv_heads
        if repeats == 1:
            return grad
        batch, _, seq, dim = shape_of(grad)
        grouped = reshape_to(self.e, self.op, grad, [batch, self.kv_heads, repeats, seq, dim])
        return total(self.e, grouped, [2])

    def keep(self) -> SSAValue | None:
        """The kept (query, key) pairs, broadcastable to the scores; None when all are kept."""
        e, op = self.e, self.op
        if op.kind == MaskKind.CUSTOM:
            kept = e.mir.compare(op.mask, scalar(e, 0.5, op.mask), "ge")
            return reshape_to(e, op, kept, [shape_of(op.mask)[0], 1, 1, shape_of(op.mask)[1]])
        if op.kind not in (MaskKind.CAUSAL, MaskKind.SLIDING_WINDOW):
            return None
        sq, sk = shape_of(op.q)[2], shape_of(op.k)[2]
        require_static(op, f"the query and key lengths of a {op.kind} mask", [sq, sk])
        position = e.mir.add(e.mir.iota([sq, 1], i64, dimension=0), e.mir.constant(sk - sq, i64))
        key = e.mir.iota([1, sk], i64, dimension=1)
        kept = e.mir.compare(key, position, "le")
        if op.kind == MaskKind.SLIDING_WINDOW:
            window = e.mir.constant(op.window.value.data, i64)
            kept = logical_and(e, kept, e.mir.compare(key, e.mir.sub(position, window), "gt"))
        return kept

    def masked_softmax(self, logits: SSAValue) -> SSAValue:
        """Softmax over keys of the masked logits; an all-masked (-inf) row gives zeros."""
        e, op = self.e, self.op
        if op.kind == MaskKind.BIAS:
            bias = op.mask if dtype_of(op.mask) == dtype_of(logits) else e.mir.cast(op.mask, dtype_of(logits))
            logits = e.mir.add(logits, bias)
        kept = self.keep()
        if kept is not None:
            logits = e.mir.where(kept, logits, scalar(e, float("-inf"), logits))
        row_max = e.mir.reduce(logits, kind="max", axes=[3], keep_dim=True)
        empty_row = e.mir.compare(row_max, scalar(e, float("-inf"), logits), "eq")
        row_max = e.mir.where(empty_row, scalar(e, 0.0, logits), row_max)
        exps = e.mir.exp(e.mir.sub(logits, row_max))
        sums = e.mir.reduce(exps, kind="sum", axes=[3], keep_dim=True)
        no_weight = e.mir.compare(sums, scalar(e, 0.0, sums), "eq")
        return e.mir.div(exps, e.mir.where(no_weight, scalar(e, 1.0, sums), sums))

    def score_gradient(self) -> SSAValue:
        """`dS` (the gradient of `q k^T`), times the scale."""
        e, weights = self.e, self.weights
        d_weights = e.mir.matmul(self.op.dy, swap_last(e, self.v))
        row = e.mir.reduce(e.mir.mul(d_weights, weights), kind="sum", axes=[3], keep_dim=True)
        d_logits = e.mir.mul(weights, e.mir.sub(d_weights, row))
        if self.capped is not None:
            one = scalar(e, 1.0, self.capped)
            d_logits = e.mir.mul(d_logits, e.mir.sub(one, e.mir.mul(self.capped, self.capped)))
        return e.mir.mul(d_logits, self.scale)


@DECOMPOSITIONS.register(AttentionBackwardOp)
def attention_backward(e: Emitter, op: AttentionBackwardOp) -> SSAValue:
    replay = AttentionReplay(e, op)
    if op.with_respect_to == AttentionWrt.VALUE:
        return replay.sum_heads(e.mir.matmul(swap_last(e, replay.weights), op.dy))
    d_scores = replay.score_gradient()
    if op.with_respect_to == AttentionWrt.QUERY:
        return e.mir.matmul(d_scores, replay.k)
    return replay.sum_heads(e.mir.matmul(swap_last(e, d_scores), op.q))
