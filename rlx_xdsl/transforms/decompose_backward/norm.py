"""Decompositions of the normalisation gradients.

All of them recompute `x_hat` (the normalised x) and `rstd = rsqrt(var + eps)`
(rms_norm: `rsqrt(mean(x^2) + eps)`) from x with reductions that keep the
normalised dims, then combine, with `g = dy * gamma`:

    dx     = rstd * (g - x_hat * mean(g * x_hat) [- mean(g) for layer/group norm])
    dgamma = sum(dy * x_hat)    dbeta = sum(dy)     over the non-normalised dims.

Group norm does the same on `x` reshaped to `[N, G, C/G * spatial]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, num_elements
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import (
    mean,
    reshape_to,
    scalar,
    shape_of,
    total,
)


def standardized(
    e: Emitter, x: SSAValue, axes: Sequence[int], eps: float, centred: bool
) -> tuple[SSAValue, SSAValue]:
    """`(x_hat, rstd)` with statistics over `axes` (kept as size-1 dims)."""
    shifted = e.mir.sub(x, mean(e, x, axes)) if centred else x
    second_moment = mean(e, e.mir.mul(shifted, shifted), axes)
    rstd = e.mir.rsqrt(e.mir.add(second_moment, scalar(e, eps, x)))
    return e.mir.mul(shifted, rstd), rstd


def input_gradient(
    e: Emitter, x_hat: SSAValue, rstd: SSAValue, g: SSAValue, axes: Sequence[int], centred: bool
) -> SSAValue:
    """`rstd (g - x_hat mean(g x_hat) [- mean(g)])`."""
    projected = e.mir.sub(g, e.mir.mul(x_hat, mean(e, e.mir.mul(g, x_hat), axes)))
    if centred:
        projected = e.mir.sub(projected, mean(e, g, axes))
    return e.mir.mul(rstd, projected)


def is_layer_norm(op: Operation) -> bool:
    return isinstance(op, (bw.LayerNormBackwardInputOp, bw.LayerNormBackwardGammaOp))


def trailing_axes(op: bw.AxisNormGradientOperation, value: SSAValue) -> list[int]:
    rank = len(shape_of(value))
    return list(range(op.normalized_axis(rank), rank))


@DECOMPOSITIONS.register(bw.LayerNormBackwardInputOp, bw.RmsNormBackwardInputOp)
def axis_norm_input(e: Emitter, op: bw.AxisNormGradientOperation) -> SSAValue:
    axes = trailing_axes(op, op.x)
    centred = is_layer_norm(op)
    x_hat, rstd = standardized(e, op.x, axes, op.eps.value.data, centred)
    return input_gradient(e, x_hat, rstd, e.mir.mul(op.dy, op.gamma), axes, centred)


@DECOMPOSITIONS.register(bw.LayerNormBackwardGammaOp, bw.RmsNormBackwardGammaOp)
def axis_norm_gamma(e: Emitter, op: bw.AxisNormGradientOperation) -> SSAValue:
    axes = trailing_axes(op, op.x)
    x_hat, _ = standardized(e, op.x, axes, op.eps.value.data, is_layer_norm(op))
    return total(e, e.mir.mul(op.dy, x_hat), range(axes[0]))


@DECOMPOSITIONS.register(bw.RmsNormBackwardBetaOp)
def rms_norm_beta(e: Emitter, op: bw.RmsNormBackwardBetaOp) -> SSAValue:
    return total(e, op.dy, range(trailing_axes(op, op.dy)[0]))


def blocks_shape(op: Operation, x: SSAValue, groups: int) -> list[int]:
    """`[N, G, C/G * spatial]`: one row per (sample, group); `?` where unknown."""
    shape = shape_of(x)
    rest = num_elements(shape[1:])
    return [shape[0], groups, DYNAMIC if rest is None else rest // groups]


def all_but_channels(value: SSAValue) -> list[int]:
    return [0, *range(2, len(shape_of(value)))]


def group_x_hat(e: Emitter, op: bw.GroupNormGradientOperation) -> tuple[SSAValue, SSAValue, list[int]]:
    """`(x_hat in blocks, rstd per block, the blocks' shape)`."""
    groups = op.num_groups.value.data
    blocks = blocks_shape(op, op.x, groups)
    x_hat, rstd = standardized(e, reshape_to(e, op, op.x, blocks), [2], op.eps.value.data, centred=True)
    return x_hat, rstd, blocks


@DECOMPOSITIONS.register(bw.GroupNormBackwardInputOp)
def group_norm_input(e: Emitter, op: bw.GroupNormBackwardInputOp) -> SSAValue:
    x_hat, rstd, blocks = group_x_hat(e, op)
    rank = len(shape_of(op.x))
    per_channel = e.mir.reshape(op.gamma, new_shape=[-1] + [1] * (rank - 2))
    g = reshape_to(e, op, e.mir.mul(op.dy, per_channel), blocks)
    dx = input_gradient(e, x_hat, rstd, g, [2], centred=True)
    return reshape_to(e, op, dx, shape_of(op.result))


@DECOMPOSITIONS.register(bw.GroupNormBackwardGammaOp)
def group_norm_gamma(e: Emitter, op: bw.GroupNormBackwardGammaOp) -> SSAValue:
    x_hat, _, _ = group_x_hat(e, op)
    x_hat = reshape_to(e, op, x_hat, shape_of(op.dy))
    return total(e, e.mir.mul(op.dy, x_hat), all_but_channels(op.dy))


@DECOMPOSITIONS.register(bw.GroupNormBackwardBetaOp)
def group_norm_beta(e: Emitter, op: bw.GroupNormBackwardBetaOp) -> SSAValue:
    return total(e, op.dy, all_but_channels(op.dy))
