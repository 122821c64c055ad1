"""Normalisations: batch norm (inference), RMS norm, layer norm."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import norm


def _batch_norm_inference(op: norm.BatchNormInferenceOp, x, gamma, beta, mean, var):
    c = (-1,) + (1,) * (x.ndim - 2)
    r = jax.lax.rsqrt(var.reshape(c) + op.eps.value.data)
    return (x - mean.reshape(c)) * r * gamma.reshape(c) + beta.reshape(c)


JAX_OPS.add(norm.BatchNormInferenceOp, with_op(_batch_norm_inference))


def _rms_norm(op: norm.RmsNormOp, x, gamma, beta):
    axes = tuple(range(op.normalized_axis(), x.ndim))
    return (
        x
        * jax.lax.rsqrt(jnp.mean(x * x, axis=axes, keepdims=True) + op.eps.value.data)
        * gamma
        + beta
    )


def _layer_norm(op: norm.LayerNormOp, x, gamma, beta):
    axes = tuple(range(op.normalized_axis(), x.ndim))
    mean = jnp.mean(x, axis=axes, keepdims=True)
    var = jnp.var(x, axis=axes, keepdims=True)
    return (x - mean) / jnp.sqrt(var + op.eps.value.data) * gamma + beta


JAX_OPS.add(norm.RmsNormOp, with_op(_rms_norm))
JAX_OPS.add(norm.LayerNormOp, with_op(_layer_norm))
