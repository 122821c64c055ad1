"""VJP rules of layer_norm, rms_norm and group_norm: RLX's backward kernels.

Each kernel recomputes the row statistics from `x` (nothing is saved from the
forward). The gamma and beta gradients of the axis norms come out shaped like
the normalised region; `unbroadcast` sums them to gamma's and beta's own shapes.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import unbroadcast
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients
from rlx_xdsl.dialects.mir.norm import GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.emitter import Emitter


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
