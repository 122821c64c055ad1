"""Normalisations: layer norm, group norm, and batch norm in eval mode."""

from __future__ import annotations

import numpy as np
import torch

from rlx_xdsl.importers.torch.table import rule

aten = torch.ops.aten


def _affine(t, value, shape, fill: float, dtype: str):
    """gamma or beta: the node's tensor, or a constant of `fill` when the model has none."""
    return t.value(value) if value is not None else t.constant(np.full(shape, fill), dtype)


@rule(aten.native_layer_norm.default)
def layer_norm(t, node):
    """Output 0 only: the mean and rstd outputs are for training kernels."""
    x, normalized_shape, weight, bias, eps = node.args
    dtype = t.dtype(x)
    gamma = _affine(t, weight, normalized_shape, 1.0, dtype)
    beta = _affine(t, bias, normalized_shape, 0.0, dtype)
    out = t.e.mir.layer_norm(t.value(x), gamma, beta, axis=-len(normalized_shape), eps=eps)
    return (out, None, None)


@rule(aten.rms_norm.default)
def rms_norm(t, node):
    """`F.rms_norm` (kept whole by the importer): `mir.rms_norm` with a zero beta;
    eps defaults to the dtype's machine epsilon, as PyTorch's."""
    names = ("input", "normalized_shape", "weight", "eps")
    args = dict(zip(names, node.args)) | dict(node.kwargs)
    x, shape = args["input"], list(args["normalized_shape"])
    dtype = t.dtype(x)
    eps = args.get("eps")
    if eps is None:
        eps = float(torch.finfo(t.meta(x).dtype).eps)
    gamma = _affine(t, args.get("weight"), shape, 1.0, dtype)
    beta = t.constant(np.zeros(shape), dtype)
    return t.e.mir.rms_norm(t.value(x), gamma, beta, axis=-len(shape), eps=eps)


@rule(aten.native_group_norm.default)
def group_norm(t, node):
    x, weight, bias, _n, channels, _hw, groups, eps = node.args
    dtype = t.dtype(x)
    gamma = _affine(t, weight, [channels], 1.0, dtype)
    beta = _affine(t, bias, [channels], 0.0, dtype)
    return (t.e.mir.group_norm(t.value(x), gamma, beta, num_groups=groups, eps=eps), None, None)


@rule(aten._native_batch_norm_legit_no_training.default)
def batch_norm_eval(t, node):
    """`(x - running_mean) * gamma / sqrt(running_var + eps) + beta`, per channel (dim 1)."""
    x, weight, bias, mean, var, _momentum, eps = node.args
    dtype = t.dtype(x)
    channels = t.shape(x)[1]
    per_channel = [channels] + [1] * (t.rank(x) - 2)
    e = t.e.mir

    def column(v):
        return e.reshape(v, new_shape=per_channel)

    scale = e.rsqrt(e.add(t.value(var), t.value(eps, dtype)))
    if weight is not None:
        scale = e.mul(scale, t.value(weight))
    out = e.mul(e.sub(t.value(x), column(t.value(mean))), column(scale))
    if bias is not None:
        out = e.add(out, column(t.value(bias)))
    return (out, None, None)
