"""LayerNormalization, GroupNormalization (opset 21: per-channel scale), BatchNormalization (inference)."""

from __future__ import annotations

from rlx_xdsl.importers.onnx.table import rule


@rule("LayerNormalization")
def layer_norm(t, node):
    x = t.value(0)
    axis = t.attr("axis", -1)
    gamma = t.value(1)
    beta = t.value(2) if t.input(2) is not None else t.constant(0, t.dtype(x))
    if t.input(2) is None:
        beta = t.e.mir.expand(beta, target_shape=t.shape(gamma))
    eps = t.attr("epsilon", 1e-5)
    y = t.e.mir.layer_norm(x, gamma, beta, axis=axis, eps=eps)
    if len(node.output) == 1 or not any(node.output[1:]):
        return y
    return [y, *_mean_inv_std(t, x, axis, eps)]


def _mean_inv_std(t, x, axis: int, eps: float):
    """LayerNormalization's optional outputs: the mean and `1 / sqrt(var + eps)` over the
    normalized axes (kept as size 1), computed in `stash_type` (default f32), as ONNX's."""
    from rlx_xdsl.importers.onnx.types import dtype_name

    e = t.e.mir
    stash = dtype_name(t.attr("stash_type", 1), t.where)
    axes = list(range(axis % t.rank(x), t.rank(x)))
    x = e.cast(x, stash) if t.dtype(x) != stash else x
    mean = e.reduce(x, kind="mean", axes=axes, keep_dim=True)
    centered = e.sub(x, mean)
    var = e.reduce(e.mul(centered, centered), kind="mean", axes=axes, keep_dim=True)
    return [mean, e.rsqrt(e.add(var, t.constant(eps, stash)))]


@rule("GroupNormalization")
def group_norm(t, node):
    if t.opset < 21:
        raise t.fail("GroupNormalization before opset 21 (per-group scale) is not supported")
    return t.e.mir.group_norm(
        t.value(0), t.value(1), t.value(2), num_groups=t.attr("num_groups"), eps=t.attr("epsilon", 1e-5)
    )


@rule("BatchNormalization")
def batch_norm(t, node):
    """`(x - mean) * scale / sqrt(var + eps) + bias` per channel (dim 1), inference mode."""
    if t.attr("training_mode", 0):
        raise t.fail("BatchNormalization in training mode is not supported")
    x = t.value(0)
    dtype = t.dtype(x)
    per_channel = [-1] + [1] * (t.rank(x) - 2)
    e = t.e.mir

    def column(v):
        return e.reshape(v, new_shape=per_channel)

    scale = e.mul(e.rsqrt(e.add(t.value(4), t.constant(t.attr("epsilon", 1e-5), dtype))), t.value(1))
    return e.add(e.mul(e.sub(x, column(t.value(3))), column(scale)), column(t.value(2)))


@rule("RMSNormalization")
def rms_norm(t, node):
    """`mir.rms_norm` with a zero beta (ONNX's RMSNormalization has none)."""
    x, scale = t.value(0), t.value(1)
    axis = t.attr("axis", -1)
    normalized = t.shape(x)[axis % t.rank(x) :]
    if t.shape(scale) != normalized:
        scale = t.e.mir.expand(scale, target_shape=normalized)
    beta = t.e.mir.expand(t.constant(0, t.dtype(x)), target_shape=normalized)
    return t.e.mir.rms_norm(x, scale, beta, axis=axis, eps=t.attr("epsilon", 1e-5))


@rule("InstanceNormalization")
def instance_norm(t, node):
    """Group norm with one channel per group."""
    x = t.value(0)
    channels = t.shape(x)[1]
    return t.e.mir.group_norm(x, t.value(1), t.value(2), num_groups=channels, eps=t.attr("epsilon", 1e-5))
