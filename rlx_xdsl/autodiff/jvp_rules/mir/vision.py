"""JVP rules of the vision ops.

resize_nearest_2x and axial_rope_2d are linear in their input and conv_transpose_2d
is bilinear in (x, w): the op itself on the tangents. layer_norm_2d is
`x̂ γ + β` over the channels of each pixel; the standardisation's Jacobian is
symmetric, so `J t_x` is layer norm's input gradient (on the NHWC permutation, as the
reverse rule) with γ = 1: `t = γ J t_x + x̂ t_γ + t_β`.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import add_tangents, element_type, splat, zeros_like
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import linear_rule
from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.autodiff.rules.mir.vision import TO_NCHW, TO_NHWC
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.vision import AxialRope2dOp, ConvTranspose2dOp, LayerNorm2dOp, ResizeNearest2xOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC

JVP_RULES.register(ResizeNearest2xOp, AxialRope2dOp)(linear_rule(0))
JVP_RULES.register(ConvTranspose2dOp)(linear_rule(0, 1))


@JVP_RULES.register(LayerNorm2dOp)
def layer_norm_2d(e: Emitter, op: LayerNorm2dOp, tangents: Tangents) -> OutTangents:
    t_x, t_gamma, t_beta = tangents
    channels = tensor_type(op.x).get_shape()[1]
    if channels == DYNAMIC:
        raise Unsupported("layer_norm_2d's tangent needs a static channel count")
    eps = op.eps.value.data
    along_c = lambda value: e.mir.reshape(value, new_shape=[1, channels, 1, 1])  # noqa: E731
    ones = splat(e, 1, element_type(op.x), [channels])
    t_norm = None
    if t_x is not None:
        x_t, t_t = (e.mir.transpose(v, perm=TO_NHWC) for v in (op.x, t_x))
        jt = e.mir.transpose(e.mir.layer_norm_backward_input(x_t, ones, t_t, axis=3, eps=eps), perm=TO_NCHW)
        t_norm = e.mir.mul(jt, along_c(op.gamma))
    if t_gamma is not None:
        x_hat = e.mir.layer_norm_2d(op.x, ones, splat(e, 0, element_type(op.x), [channels]), eps=eps)
        t_gamma = e.mir.mul(x_hat, along_c(t_gamma))
    full = add_tangents(e, t_norm, t_gamma)
    if t_beta is None:
        return [full]
    return [e.mir.add(full if full is not None else zeros_like(e, op.result), along_c(t_beta))]
