"""Normalisations: batch norm (inference), RMS norm, layer norm, group norm.

f16/bf16 compute in f32 (statistics and affine); the result rounds once.
"""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.dialects.mir import norm


def _batch_norm_inference(op: norm.BatchNormInferenceOp, x, gamma, beta, mean, var):
    x, gamma, beta, mean, var = map(widen, (x, gamma, beta, mean, var))
    c = (-1,) + (1,) * (x.ndim - 2)
    r = jax.lax.rsqrt(var.reshape(c) + op.eps.value.data)
    return (x - mean.reshape(c)) * r * gamma.reshape(c) + beta.reshape(c)


def rms_norm(x, gamma, beta, axis: int, eps: float):
    x, gamma, beta = map(widen, (x, gamma, beta))
    axes = tuple(range(axis, x.ndim))
    return x * jax.lax.rsqrt(jnp.mean(x * x, axis=axes, keepdims=True) + eps) * gamma + beta


def layer_norm(x, gamma, beta, axis: int, eps: float):
    x, gamma, beta = map(widen, (x, gamma, beta))
    axes = tuple(range(axis, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(jnp.square(x - mean), axis=axes, keepdims=True)
    return (x - mean) / jnp.sqrt(var + eps) * gamma + beta


def group_norm(x, gamma, beta, groups: int, eps: float):
    """Layer norm of each (sample, channel group) block, then a per-channel affine."""
    x, gamma, beta = map(widen, (x, gamma, beta))
    blocks = x.reshape(x.shape[0], groups, -1)
    ones = jnp.ones((), x.dtype)
    normed = layer_norm(blocks, ones, jnp.zeros((), x.dtype), 2, eps).reshape(x.shape)
    c = (-1,) + (1,) * (x.ndim - 2)
    return normed * gamma.reshape(c) + beta.reshape(c)


JAX_OPS.add(norm.BatchNormInferenceOp, with_op(_batch_norm_inference))
JAX_OPS.add(
    norm.RmsNormOp,
    with_op(lambda op, x, g, b: rms_norm(x, g, b, op.normalized_axis(), op.eps.value.data)),
)
JAX_OPS.add(
    norm.LayerNormOp,
    with_op(lambda op, x, g, b: layer_norm(x, g, b, op.normalized_axis(), op.eps.value.data)),
)
JAX_OPS.add(
    norm.GroupNormOp,
    with_op(lambda op, x, g, b: group_norm(x, g, b, op.num_groups.value.data, op.eps.value.data)),
)
