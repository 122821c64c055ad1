"""Normalisations: batch norm (inference), RMS norm, layer norm, group norm.

f16/bf16 compute in f32 (statistics and affine); the result rounds once. Every product
that a sum reads (the squares of the statistics, `normalised * gamma`) is `rounded` first,
as the interpreter's separate numpy operations round it (XLA's CPU compiler would fuse it
into a multiply-add); the divisions by square roots are `over_sqrt`'s.
"""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, over_sqrt, rounded, widen, with_op
from rlx_xdsl.dialects.mir import norm


def affine(normalised, gamma, beta):
    """`normalised * gamma + beta`, the product rounded before the add."""
    return rounded(normalised * gamma) + beta


def _batch_norm_inference(op: norm.BatchNormInferenceOp, x, gamma, beta, mean, var):
    x, gamma, beta, mean, var = map(widen, (x, gamma, beta, mean, var))
    c = (-1,) + (1,) * (x.ndim - 2)
    normalised = over_sqrt(x - mean.reshape(c), var.reshape(c) + op.eps.value.data)
    return affine(normalised, gamma.reshape(c), beta.reshape(c))


def rms_normalised(x, axis: int, eps: float):
    """`x / sqrt(mean(x²) + eps)` over the axes from `axis` on (f32 or wider `x`)."""
    axes = tuple(range(axis, x.ndim))
    return over_sqrt(x, jnp.mean(rounded(x * x), axis=axes, keepdims=True) + eps)


def layer_normalised(x, axis: int, eps: float):
    """`(x - mean) / sqrt(var + eps)` over the axes from `axis` on (f32 or wider `x`)."""
    axes = tuple(range(axis, x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.mean(rounded(jnp.square(x - mean)), axis=axes, keepdims=True)
    return over_sqrt(x - mean, var + eps)


def rms_norm(x, gamma, beta, axis: int, eps: float):
    x, gamma, beta = map(widen, (x, gamma, beta))
    return affine(rms_normalised(x, axis, eps), gamma, beta)


def layer_norm(x, gamma, beta, axis: int, eps: float):
    x, gamma, beta = map(widen, (x, gamma, beta))
    return affine(layer_normalised(x, axis, eps), gamma, beta)


def group_norm(x, gamma, beta, groups: int, eps: float):
    """Layer norm of each (sample, channel group) block, then a per-channel affine."""
    x, gamma, beta = map(widen, (x, gamma, beta))
    blocks = x.reshape(x.shape[0], groups, -1)
    ones = jnp.ones((), x.dtype)
    normed = layer_norm(blocks, ones, jnp.zeros((), x.dtype), 2, eps).reshape(x.shape)
    c = (-1,) + (1,) * (x.ndim - 2)
    return affine(normed, gamma.reshape(c), beta.reshape(c))


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
