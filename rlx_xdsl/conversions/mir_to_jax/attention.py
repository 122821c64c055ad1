"""Rotary embeddings and attention."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import attention as att


def _rope(op: att.RopeOp, x, cos, sin):
    half = op.n_rot.value.data // 2
    a, b = x[..., :half], x[..., half : 2 * half]
    return jnp.concatenate(
        [a * cos - b * sin, b * cos + a * sin, x[..., 2 * half :]], axis=-1
    )


def _attention(op: att.AttentionOp, q, k, v, mask=None):
    """Causal / unmasked attention with grouped KV heads, as `jax.nn.dot_product_attention` defines it."""
    if (
        op.kind not in (att.MaskKind.NONE, att.MaskKind.CAUSAL)
        or op.attn_logit_softcap is not None
    ):
        raise NotImplementedError(
            f"jax oracle: attention with mask {op.kind} or a soft-cap"
        )
    # jax.nn.dot_product_attention takes [B, S, H, D] and aligns a causal mask at the top-left,
    # which equals MIR's bottom-right alignment for Sq == Sk.
    assert q.shape[2] == k.shape[2] or op.kind == att.MaskKind.NONE
    out = jax.nn.dot_product_attention(
        jnp.swapaxes(q, 1, 2), jnp.swapaxes(k, 1, 2), jnp.swapaxes(v, 1, 2),
        scale=op.scale(), is_causal=op.kind == att.MaskKind.CAUSAL,
    )  # fmt: skip
    return jnp.swapaxes(out, 1, 2)


JAX_OPS.add(att.RopeOp, with_op(_rope))
JAX_OPS.add(att.AttentionOp, with_op(_attention))
