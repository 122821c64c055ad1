"""VJP rules of conv and pool: RLX's backward kernels."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import static_dims
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp
from rlx_xdsl.ir.emitter import Emitter


@VJP_RULES.register(ConvOp)
def conv(e: Emitter, op: ConvOp, cotangents: Cotangents) -> Gradients:
    """`conv_backward_input` (the transposed convolution, sized by x's H and W) and
    `conv_backward_weight` (x correlated with g)."""
    (g,) = cotangents
    props = {name: list(op.pair(name)) for name in ("kernel_size", "stride", "padding", "dilation")}
    props["groups"] = op.groups.value.data

    def d_input() -> SSAValue:
        size = static_dims(tensor_type(op.x).get_shape()[2:], "the input's height and width")
        return e.mir.conv_backward_input(g, op.w, input_size=list(size), **props)

    return [d_input, lambda: e.mir.conv_backward_weight(op.x, g, **props)]


@VJP_RULES.register(PoolOp)
def pool(e: Emitter, op: PoolOp, cotangents: Cotangents) -> Gradients:
    """`pool_backward`: max routes each window's gradient to its (first) maximum; mean shares it
    among the window's real cells."""
    (g,) = cotangents
    props = {name: list(op.pair(name)) for name in ("kernel_size", "stride", "padding")}
    return [e.mir.pool_backward(op.x, g, kind=op.kind.data, **props)]
