"""numpy semantics of MIR normalisations: layer_norm, rms_norm, group_norm.

Statistics use the biased variance and are computed in the accumulation dtype
(`interpreters.common.widened`: f32 for f16/bf16); the result is cast back to x's dtype.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import norm
from rlx_xdsl.interpreters.common import result_dtype, widened
from rlx_xdsl.numerics import convert


def standardize(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    """`(x - mean) / sqrt(var + eps)` with statistics over `axes` (two-pass variance)."""
    centred = x - np.mean(x, axis=axes, keepdims=True)
    var = np.mean(centred * centred, axis=axes, keepdims=True)
    return centred / np.sqrt(var + x.dtype.type(eps))


def rms_scale(x: np.ndarray, axes: tuple[int, ...], eps: float) -> np.ndarray:
    """`x * rsqrt(mean(x^2) + eps)` with the mean over `axes`."""
    mean_sq = np.mean(x * x, axis=axes, keepdims=True)
    return x / np.sqrt(mean_sq + x.dtype.type(eps))


def group_standardize(x: np.ndarray, groups: int, eps: float) -> np.ndarray:
    """Standardise each (sample, channel group) block of `x[N, C, ...]`."""
    blocks = x.reshape(x.shape[0], groups, -1)
    return standardize(blocks, (2,), eps).reshape(x.shape)


def affine(dtype: np.dtype, normalised: np.ndarray, gamma: np.ndarray, beta: np.ndarray, shape=None) -> np.ndarray:
    """`normalised * gamma + beta` in the accumulation dtype, rounded to `dtype`."""
    g, b = widened(gamma), widened(beta)
    if shape is not None:
        g, b = g.reshape(shape), b.reshape(shape)
    return convert(normalised * g + b, dtype)


def _trailing_axes(op: norm.AxisNormOperation, x: np.ndarray) -> tuple[int, ...]:
    return tuple(range(op.normalized_axis(), x.ndim))


def run_layer_norm(op: norm.LayerNormOp, x, gamma, beta) -> tuple[np.ndarray]:
    normalised = standardize(widened(x), _trailing_axes(op, x), op.eps.value.data)
    return (affine(result_dtype(op), normalised, gamma, beta),)


def run_rms_norm(op: norm.RmsNormOp, x, gamma, beta) -> tuple[np.ndarray]:
    normalised = rms_scale(widened(x), _trailing_axes(op, x), op.eps.value.data)
    return (affine(result_dtype(op), normalised, gamma, beta),)


def run_group_norm(op: norm.GroupNormOp, x, gamma, beta) -> tuple[np.ndarray]:
    normalised = group_standardize(widened(x), op.num_groups.value.data, op.eps.value.data)
    per_channel = (x.shape[1],) + (1,) * (x.ndim - 2)
    return (affine(result_dtype(op), normalised, gamma, beta, per_channel),)


def run_batch_norm_inference(op: norm.BatchNormInferenceOp, x, gamma, beta, mean, var) -> tuple[np.ndarray]:
    per_channel = (x.shape[1],) + (1,) * (x.ndim - 2)
    m, v = widened(mean).reshape(per_channel), widened(var).reshape(per_channel)
    eps = v.dtype.type(op.eps.value.data)
    normalised = (widened(x) - m) / np.sqrt(v + eps)
    return (affine(result_dtype(op), normalised, gamma, beta, per_channel),)


KERNELS = {
    norm.LayerNormOp: run_layer_norm,
    norm.RmsNormOp: run_rms_norm,
    norm.GroupNormOp: run_group_norm,
    norm.BatchNormInferenceOp: run_batch_norm_inference,
}
