"""VJP rules of the vision ops, through existing kernels:

* layer_norm_2d: layer norm's backward kernels on the NHWC permutation;
* resize_nearest_2x: each 2x2 block's cotangents summed (mean pooling times 4, exact);
* axial_rope_2d: the rotation's transpose, the same op with `inverse` flipped;
* conv_transpose_2d: it is conv's input gradient, so dx is the conv of the cotangent
  with w, and dw is conv's weight gradient with the roles of x and g swapped.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.vision import AxialRope2dOp, ConvTranspose2dOp, LayerNorm2dOp, ResizeNearest2xOp
from rlx_xdsl.ir.emitter import Emitter

TO_NHWC, TO_NCHW = [0, 2, 3, 1], [0, 3, 1, 2]


@VJP_RULES.register(LayerNorm2dOp)
def layer_norm_2d(e: Emitter, op: LayerNorm2dOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    eps = op.eps.value.data
    x_t = lambda: e.mir.transpose(op.x, perm=TO_NHWC)  # noqa: E731
    g_t = lambda: e.mir.transpose(g, perm=TO_NHWC)  # noqa: E731
    return [
        lambda: e.mir.transpose(
            e.mir.layer_norm_backward_input(x_t(), op.gamma, g_t(), axis=3, eps=eps), perm=TO_NCHW
        ),
        lambda: e.mir.layer_norm_backward_gamma(x_t(), g_t(), axis=3, eps=eps),
        lambda: e.mir.reduce(g, kind="sum", axes=[0, 2, 3]),
    ]


@VJP_RULES.register(ResizeNearest2xOp)
def resize_nearest_2x(e: Emitter, op: ResizeNearest2xOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    mean = e.mir.pool(g, kind="mean", kernel_size=[2, 2])
    return [e.mir.mul(mean, e.mir.constant(4.0, tensor_type(g).element_type))]


@VJP_RULES.register(AxialRope2dOp)
def axial_rope_2d(e: Emitter, op: AxialRope2dOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    names = ("end_x", "end_y", "head_dim", "num_heads", "repeat_factor")
    props = dict(zip(names, op.ints(*names)))
    return [e.mir.axial_rope_2d(g, theta=op.theta.value.data, inverse=op.inverse is None, **props)]


@VJP_RULES.register(ConvTranspose2dOp)
def conv_transpose_2d(e: Emitter, op: ConvTranspose2dOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    props = {name: list(op.pair(name)) for name in ("kernel_size", "stride", "padding", "dilation")}
    props["groups"] = op.groups.value.data
    return [
        lambda: e.mir.conv(g, op.w, **props),
        lambda: e.mir.conv_backward_weight(g, op.x, **props),
    ]
