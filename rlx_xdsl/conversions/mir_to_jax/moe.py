"""Mixture-of-experts and LoRA: low-rank adapters, per-row expert matmuls, and the
block-quantised expert weights (decoded as `mir.dequant_matmul` decodes its weight)."""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.indexing import ids
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op, widen
from rlx_xdsl.dialects.mir import moe


def grouped_matmul(x, w, expert):
    """Row m of `x[M, K]` times `w[expert[m]]` of `w[E, K, N]`."""
    return jnp.einsum("mk,mkn->mn", widen(x), jnp.take(widen(w), ids(expert), axis=0))


def _lora(op: moe.LoraMatmulOp, x, w, a, b):
    x, w, a, b = map(widen, (x, w, a, b))
    base = jnp.matmul(x, w)
    return base + op.scale_value * jnp.matmul(jnp.matmul(x, a), b)


JAX_OPS.add(moe.LoraMatmulOp, with_op(_lora))
JAX_OPS.add(moe.GroupedMatmulOp, with_op(lambda op, x, w, e: grouped_matmul(x, w, e)))
