"""numpy semantics of MIR attention and rotary position embedding.

As in fused attention kernels (FlashAttention), scores, softcap and softmax are
computed in the accumulation dtype (f32 for f16/bf16, else the op's dtype), the
probabilities are rounded to the op's dtype, and `probs @ v` accumulates in f32
before its one rounding to the op's dtype.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind, RopeOp
from rlx_xdsl.interpreters.common import as_result, result_dtype
from rlx_xdsl.numerics import accumulate_matmul, accumulation_dtype, convert, widened


def repeat_kv_heads(kv: np.ndarray, num_heads: int) -> np.ndarray:
    """Grouped-query attention: query head `h` reads KV head `h // (num_heads / Hkv)`."""
    return np.repeat(kv, num_heads // kv.shape[1], axis=1)


def position_keep(kind: MaskKind, window: int | None, sq: int, sk: int) -> np.ndarray | None:
    """`[Sq, Sk]` booleans for the positional masks (None when the kind is not positional).

    Queries are aligned with the last keys (query `i` sits at key position
    `i + Sk - Sq`), so a KV cache longer than the query block works.
    """
    if kind not in (MaskKind.CAUSAL, MaskKind.SLIDING_WINDOW):
        return None
    position = np.arange(sq)[:, None] + (sk - sq)
    key = np.arange(sk)[None, :]
    keep = key <= position
    if kind == MaskKind.SLIDING_WINDOW:
        assert window is not None
        keep &= key > position - window
    return keep


def softmax_or_zero(scores: np.ndarray) -> np.ndarray:
    """Softmax over the last axis; a row that is entirely `-inf` gives zeros, not NaN."""
    zero = np.zeros((), scores.dtype)
    row_max = scores.max(axis=-1, keepdims=True)
    row_max = np.where(np.isneginf(row_max), zero, row_max)
    e = np.exp(scores - row_max)
    total = e.sum(axis=-1, keepdims=True)
    return e / np.where(total == zero, np.ones((), scores.dtype), total)


def run_attention(op: AttentionOp, q, k, v, mask=None) -> tuple[np.ndarray]:
    dt = result_dtype(op)
    acc = accumulation_dtype(dt)
    num_heads = op.num_heads.value.data
    k, v = repeat_kv_heads(k, num_heads), repeat_kv_heads(v, num_heads)
    scores = accumulate_matmul(q, np.swapaxes(k, -1, -2)) * acc.type(op.scale())
    if op.attn_logit_softcap is not None:
        cap = acc.type(op.attn_logit_softcap.value.data)
        scores = cap * np.tanh(scores / cap)
    window = op.window.value.data if op.window is not None else None
    keep = position_keep(op.kind, window, q.shape[2], k.shape[2])
    if op.kind == MaskKind.CUSTOM:
        keep = (mask >= 0.5)[:, None, None, :]
    if op.kind == MaskKind.BIAS:
        scores = scores + convert(mask, acc)
    if keep is not None:
        scores = np.where(keep, scores, acc.type(-np.inf))
    probs = convert(softmax_or_zero(scores), dt)
    return (as_result(op, accumulate_matmul(probs, v)),)


def rotate(x: np.ndarray, cos: np.ndarray, sin: np.ndarray, n_rot: int) -> np.ndarray:
    """RoPE with NeoX pairing of the first `n_rot` dims, in the accumulation dtype (unrounded:
    halves round once, at the end)."""
    x, cos, sin = (widened(a) for a in (x, cos, sin))
    half = n_rot // 2
    x1, x2, rest = x[..., :half], x[..., half : 2 * half], x[..., 2 * half :]
    # cos and sin broadcast into x's leading dims, so all three parts share them.
    out = (x1 * cos - x2 * sin, x2 * cos + x1 * sin, rest)
    return np.concatenate(out, axis=-1)


def run_rope(op: RopeOp, x, cos, sin) -> tuple[np.ndarray]:
    return (as_result(op, rotate(x, cos, sin, op.n_rot.value.data)),)


KERNELS = {AttentionOp: run_attention, RopeOp: run_rope}
