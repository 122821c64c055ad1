"""VJP rules of the Gaussian-splatting ops (RLX's `GaussianSplatRender` arm).

The render's rule emits one `mir.gaussian_splat_render_backward` (the exact gradient: no
cotangent clipping, every SH band, no anisotropy guard) and slices its packed rows into
each input's gradient; the camera gets zeros. render_backward has no gradient. prepare and
rasterize have no rule: `rlx-prepare-ad`'s `fuse-decomposed-gaussian-splat` step turns the
pair into a render, and `rlx-grad` names that step for a half it left alone.
"""

from __future__ import annotations

from functools import cache

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, no_gradient
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.splat import (
    GaussianSplatRenderBackwardOp,
    GaussianSplatRenderOp,
    sh_band,
)
from rlx_xdsl.ir.emitter import Emitter

VJP_RULES.register(GaussianSplatRenderBackwardOp)(no_gradient)


@VJP_RULES.register(GaussianSplatRenderOp)
def gaussian_splat_render(
    e: Emitter, op: GaussianSplatRenderOp, cotangents: Cotangents
) -> Gradients:
    (g,) = cotangents
    count = tensor_type(op.sh_coeffs).get_shape()[1]
    packed = cache(
        lambda: e.mir.gaussian_splat_render_backward(
            *op.operands,
            g,
            **op.props(),
            loss_grad_clip=0.0,
            sh_band=sh_band(count),
            max_anisotropy=0.0,
        )
    )

    def columns(start: int, width: int, shape: list[int] | None = None):
        def emit():
            part = e.mir.narrow(packed(), axis=1, start=start, len=width)
            return part if shape is None else e.mir.reshape(part, new_shape=shape)

        return emit

    return [
        columns(0, 3),
        columns(3, 3),
        columns(6, 4),
        columns(10, 1, [-1]),
        columns(11, 3),
        columns(14, 3 * count, [-1, count, 3]),
        lambda: zeros_like(e, op.meta),
    ]
