"""JVP rules of reduce, softmax, cumsum and topk.

Sums, means and running sums are linear. `max`/`min` and `prod` reuse the
partial derivatives of the reverse rules (the VJP of a reduce with a cotangent
of ones is the gradient of each element), so both modes agree at ties (the
tangent of the tied elements averaged) and at zeros of a product; RLX's
forward rule for max/min returns zero.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import reshape_to, scalar, splat, zeros_like
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import linear
from rlx_xdsl.autodiff.rules.mir.reduction import _chooser_rule, _prod_rule, topk_onehot
from rlx_xdsl.autodiff.rules.mir.reduction import softmax as softmax_vjp
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp, TopkOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import is_static

JVP_RULES.register(CumsumOp)(linear)


def _ones_like(e: Emitter, value: SSAValue) -> SSAValue:
    t = tensor_type(value)
    if is_static(t.get_shape()):
        return splat(e, 1, t.element_type, t.get_shape())
    return e.mir.add(zeros_like(e, value), scalar(e, 1, value))


_PARTIALS = {ReduceKind.MAX: _chooser_rule, ReduceKind.MIN: _chooser_rule, ReduceKind.PROD: _prod_rule}


@JVP_RULES.register(ReduceOp)
def reduce(e: Emitter, op: ReduceOp, tangents: Tangents) -> OutTangents:
    """sum, mean: the reduce of the tangent; max, min, prod: the sum of `t * d result / d x`."""
    partials = _PARTIALS.get(op.kind.data)
    if partials is None:
        return linear(e, op, tangents)
    slope = partials(e, op, _ones_like(e, op.result))
    (t,) = tangents
    moved = e.mir.mul(slope, t)
    return [
        e.mir.reduce(moved, kind="sum", axes=list(op.normalized_axes()), keep_dim=op.keep_dim is not None)
    ]


JVP_RULES.add(SoftmaxOp, softmax_vjp)
"""`dy = y * (t - sum(y * t))` along the axis: the Jacobian is symmetric, so the reverse
rule is the forward one."""


@JVP_RULES.register(TopkOp)
def topk(e: Emitter, op: TopkOp, tangents: Tangents) -> OutTangents:
    """The values' tangent is the input's tangent at the chosen positions; the indices have none.

    `onehot[..., j, n] = (indices[..., j] == n)` picks them: `onehot @ t[..., :, None]`.
    """
    (t,) = tangents
    onehot = topk_onehot(e, op, t, "pick the tangent")
    shape = tensor_type(op.input).get_shape()
    picked = e.mir.matmul(onehot, reshape_to(e, t, [*shape[:-1], shape[-1], 1]))
    return [reshape_to(e, picked, tensor_type(op.values).get_shape()), None]
