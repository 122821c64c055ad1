"""VJP rules of layer_norm, rms_norm and group_norm: RLX's backward kernels.

Each kernel recomputes the row statistics from `x` (nothing is saved from the
forward). The gamma and beta gradients of the axis norms come out shaped like
the normalised region; `unbroadcast` sums them to gamma's and beta's own shapes.
"""

from __future__ import annotations

from functools import cache

from rlx_xdsl.autodiff.emit import scalar, unbroadcast
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients
from rlx_xdsl.dialects.mir.norm import BatchNormInferenceOp, GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.ir.emitter import Emitter


def _axis_props(op: LayerNormOp | RmsNormOp) -> dict:
    return {"axis": op.normalized_axis(), "eps": op.eps.value.data}


@VJP_RULES.register(LayerNormOp)
def layer_norm(e: Emitter, op: LayerNormOp, cotangents: Cotangents) -> Gradients:
    """`layer_norm_backward_input` and `_gamma`; beta's gradient is the summed `g` (as RLX)."""
    (g,) = cotangents
    props = _axis_props(op)
    return [
        lambda: e.mir.layer_norm_backward_input(op.x, op.gamma, g, **props),
        lambda: unbroadcast(e, e.mir.layer_norm_backward_gamma(op.x, g, **props), op.gamma),
        lambda: unbroadcast(e, g, op.beta),
    ]


@VJP_RULES.register(RmsNormOp)
def rms_norm(e: Emitter, op: RmsNormOp, cotangents: Cotangents) -> Gradients:
    """`rms_norm_backward_input`, `_gamma` and `_beta`."""
    (g,) = cotangents
    props = _axis_props(op)
    return [
        lambda: e.mir.rms_norm_backward_input(op.x, op.gamma, g, **props),
        lambda: unbroadcast(e, e.mir.rms_norm_backward_gamma(op.x, g, **props), op.gamma),
        lambda: unbroadcast(e, e.mir.rms_norm_backward_beta(g, axis=props["axis"]), op.beta),
    ]


@VJP_RULES.register(GroupNormOp)
def group_norm(e: Emitter, op: GroupNormOp, cotangents: Cotangents) -> Gradients:
    """`group_norm_backward_input`, `_gamma` and `_beta` (gamma and beta are per channel)."""
    (g,) = cotangents
    props = {"num_groups": op.num_groups.value.data, "eps": op.eps.value.data}
    return [
        lambda: e.mir.group_norm_backward_input(op.x, op.gamma, g, **props),
        lambda: e.mir.group_norm_backward_gamma(op.x, g, **props),
        lambda: e.mir.group_norm_backward_beta(g),
    ]


@VJP_RULES.register(BatchNormInferenceOp)
def batch_norm_inference(e: Emitter, op: BatchNormInferenceOp, cotangents: Cotangents) -> Gradients:
    """Composed from primitives, for all five operands (RLX's kernels cover x, gamma, beta).

    With `r = rsqrt(var + eps)` and `xc = x - mean`: `dx = g * gamma * r`,
    `dgamma = sum(g * xc) * r`, `dbeta = sum(g)`, `dmean = -dbeta * gamma * r`,
    `dvar = -sum(g * xc) * gamma * r^3 / 2`; sums run over every axis but the channel
    axis 1, and `[C]` values broadcast against x as `[C, 1, ...]`.
    """
    (g,) = cotangents
    rank = op.x.type.get_num_dims()
    not_channel = [a for a in range(rank) if a != 1]

    def per_channel(v):
        return e.mir.reshape(v, new_shape=[-1] + [1] * (rank - 2))

    def channel_sum(v):
        return e.mir.reduce(v, kind="sum", axes=not_channel)

    r = cache(lambda: e.mir.rsqrt(e.mir.add(op.var, scalar(e, op.eps.value.data, op.var))))
    scale = cache(lambda: e.mir.mul(op.gamma, r()))
    dbeta = cache(lambda: channel_sum(g))
    g_xc = cache(lambda: channel_sum(e.mir.mul(g, e.mir.sub(op.x, per_channel(op.mean)))))
    return [
        lambda: e.mir.mul(g, per_channel(scale())),
        lambda: e.mir.mul(g_xc(), r()),
        dbeta,
        lambda: e.mir.neg(e.mir.mul(dbeta(), scale())),
        lambda: e.mir.mul(e.mir.mul(g_xc(), scale()), e.mir.mul(e.mir.mul(r(), r()), scalar(e, -0.5, g))),
    ]
