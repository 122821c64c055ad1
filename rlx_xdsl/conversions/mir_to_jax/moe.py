"""Mixture-of-experts and LoRA: low-rank adapters, per-row expert matmuls, and the
block-quantised expert weights (decoded as `mir.dequant_matmul` decodes its weight)."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax import quant
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import moe


def grouped_matmul(x, w, expert):
    """Row m of `x[M, K]` times `w[expert[m]]` of `w[E, K, N]`.

    Every row meets every expert (`[M, E, N]`, one batched contraction) and picks its
    own: E times the FLOPs of the routed product, but never an `[M, K, N]` gather.
    """
    every = jnp.einsum("mk,ekn->men", widen(x), widen(w))
    return jnp.take_along_axis(every, expert.astype(jnp.int32).reshape(-1, 1, 1), axis=1)[:, 0]


def _lora(op: moe.LoraMatmulOp, x, w, a, b):
    x, w, a, b = map(widen, (x, w, a, b))
    base = jnp.matmul(x, w)
    return base + op.scale_value * jnp.matmul(jnp.matmul(x, a), b)


JAX_OPS.add(moe.LoraMatmulOp, with_op(_lora))
JAX_OPS.add(moe.GroupedMatmulOp, with_op(lambda op, x, w, e: grouped_matmul(x, w, e)))


def expert_weights(op, w_q, scale, zp, k: int | None = None):
    """`W[E, K, N]`: each expert's weight decoded as `mir.dequant_matmul` decodes it
    (a `[1]` zp is shared by every expert). GGUF experts are `[E, N, row bytes]` stacks of
    `K`-value rows, their scale and zp unused."""
    scheme = op.quant_scheme()
    if scheme.is_gguf:
        k = k if k is not None else tensor_type(op.results[0]).get_shape()[1]
        return jax.vmap(lambda rows: quant.decode_gguf(scheme, rows, k).T)(w_q)
    shared = zp.shape[0] != w_q.shape[0] or zp.ndim == 1
    decode = lambda w, s, z: quant.decode(op.quant_scheme(), op.block(), w, s, z)  # noqa: E731
    return jax.vmap(decode, in_axes=(0, 0, None if shared else 0))(w_q, scale, zp)


def _dequant_grouped_matmul(op: moe.DequantGroupedMatmulOp, x, w_q, scale, zp, expert):
    return grouped_matmul(x, expert_weights(op, w_q, scale, zp, x.shape[-1]), expert)


JAX_OPS.add(moe.DequantGroupedMatmulOp, with_op(_dequant_grouped_matmul))
JAX_OPS.add(moe.DequantMoeWeightsOp, with_op(expert_weights))
