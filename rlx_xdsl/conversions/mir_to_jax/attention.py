"""Rotary embeddings and attention, every mask kind and the logit soft-cap."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import (
    CUDA_KERNELS,
    JAX_OPS,
    accumulator,
    narrow_precision,
    narrow_product,
    rounded,
    widen,
    with_op,
)
from rlx_xdsl.dialects.mir import attention as att
from rlx_xdsl.dialects.mir.attention import MaskKind


def rope(x, cos, sin, n_rot: int, inverse: bool = False):
    """NeoX rotation of dims `[0, n_rot)` (dim i pairs with i + n_rot/2), f16/bf16 in f32;
    each product `rounded` before the sum, as the interpreter's `rotate`."""
    x, cos, sin = map(widen, (x, cos, sin))
    half = n_rot // 2
    sin = -sin if inverse else sin
    a, b = x[..., :half], x[..., half : 2 * half]
    ac, bs, bc, as_ = (rounded(p) for p in (a * cos, b * sin, b * cos, a * sin))
    return jnp.concatenate([ac - bs, bc + as_, x[..., 2 * half :]], axis=-1)


def _keep(op, sq: int, sk: int, mask, batch: int):
    """Which keys each query attends, broadcastable to `[B, H, Sq, Sk]` (None: all)."""
    kind = op.kind
    p = jnp.arange(sq)[:, None] + (sk - sq)  # query i sits at key position p
    j = jnp.arange(sk)[None, :]
    if kind == MaskKind.CAUSAL:
        return j <= p
    if kind == MaskKind.SLIDING_WINDOW:
        return (j <= p) & (j > p - op.window.value.data)
    if kind == MaskKind.CUSTOM:  # NaN compares false: it masks the key
        return (widen(mask) >= 0.5).reshape(batch, 1, 1, sk)
    return None


def flash_applies(op, q, k, v, mask) -> bool:
    """Whether cuDNN's fused attention computes exactly this op: f16/bf16 q, k and v, no
    mask operand, no soft-cap, a causal mask over as many queries as keys (cuDNN aligns it
    top-left, MIR bottom-right: the same when Sq == Sk) or none, head dim a multiple of 8 up
    to 128, query heads a multiple of the KV heads."""
    kinds = (MaskKind.NONE,) + ((MaskKind.CAUSAL,) if q.shape[2] == k.shape[2] else ())
    return (
        q.dtype in (jnp.float16, jnp.bfloat16)
        and q.dtype == k.dtype == v.dtype
        and mask is None
        and op.attn_logit_softcap is None
        and op.kind in kinds
        and q.shape[3] % 8 == 0
        and q.shape[3] <= 128
        and q.shape[1] % k.shape[1] == 0
    )


def flash_attention(op, q, k, v):
    """cuDNN's flash attention (`[B, H, S, D]` in and out; jax takes `[B, S, H, D]`)."""
    out = jax.nn.dot_product_attention(
        jnp.swapaxes(q, 1, 2), jnp.swapaxes(k, 1, 2), jnp.swapaxes(v, 1, 2),
        scale=op.scale(), is_causal=op.kind == MaskKind.CAUSAL, implementation="cudnn",
    )  # fmt: skip
    return jnp.swapaxes(out, 1, 2)


def attention(op, q, k, v, mask=None):
    """`softmax(mask(softcap(q k^T * scale))) v` with grouped KV heads.

    `op` supplies the properties (attention, its backward, or a fused block).
    Scores and softmax are f32 for f16/bf16, the probabilities round to q's dtype,
    and a row whose keys are all masked gives zeros.
    """
    if CUDA_KERNELS.get() and flash_applies(op, q, k, v, mask):
        return flash_attention(op, q, k, v)
    dtype = q.dtype
    batch, heads, sq, head_dim = q.shape
    kv_heads, sk = k.shape[1], k.shape[2]
    # Query head h reads KV head h // group: contract per KV head, never copying k and v.
    grouped = q.reshape(batch, kv_heads, heads // kv_heads, sq, head_dim)
    s = jnp.einsum("bkgqd,bkjd->bkgqj", grouped, k.astype(dtype), preferred_element_type=accumulator(q), precision=narrow_precision(q))
    s = rounded(widen(s).reshape(batch, heads, sq, sk) * op.scale())  # before a bias is added
    if op.attn_logit_softcap is not None:
        cap = op.attn_logit_softcap.value.data
        s = rounded(cap * jnp.tanh(s / cap))
    if op.kind == MaskKind.BIAS:
        s = s + widen(mask)
    keep = _keep(op, sq, sk, mask, batch)
    scored = s != -jnp.inf  # a NaN score (a NaN in a bias) is kept: it makes its row NaN
    keep = jnp.broadcast_to(scored if keep is None else keep & scored, s.shape)
    s = jnp.where(keep, s, -jnp.inf)  # before exp: a masked score never overflows, nor its gradient
    m = jax.lax.stop_gradient(jnp.max(s, axis=-1, keepdims=True))
    e = jnp.exp(s - jnp.where(jnp.isfinite(m), m, 0))
    total = jnp.sum(e, axis=-1, keepdims=True)
    p = (e / jnp.where(total == 0, 1, total)).astype(dtype)
    p = p.reshape(batch, kv_heads, heads // kv_heads, sq, sk)
    out = jnp.einsum("bkgqj,bkjd->bkgqd", p, v.astype(dtype), preferred_element_type=narrow_product(p), precision=narrow_precision(p))
    return widen(out).reshape(batch, heads, sq, head_dim)

JAX_OPS.add(
    att.RopeOp, with_op(lambda op, x, cos, sin: rope(x, cos, sin, op.n_rot.value.data))
)
JAX_OPS.add(att.AttentionOp, with_op(attention))
