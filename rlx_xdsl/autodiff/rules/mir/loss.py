"""VJP rules of the softmax cross-entropy losses."""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import reshape_to
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC


@VJP_RULES.register(SoftmaxCrossEntropyWithLogitsOp)
def sce_with_logits(e: Emitter, op: SoftmaxCrossEntropyWithLogitsOp, cotangents: Cotangents) -> Gradients:
    """`mir.softmax_cross_entropy_backward`: `(softmax(logits) - one_hot(labels)) * g[:, None]`,
    with the forward's `ignore_index` (ignored rows get no gradient)."""
    (g,) = cotangents
    grad = e.mir.softmax_cross_entropy_backward(op.logits, op.labels, g, ignore_index=op.ignored_label())
    return [grad, None]


@VJP_RULES.register(SoftmaxCrossEntropyOp)
def sce(e: Emitter, op: SoftmaxCrossEntropyOp, cotangents: Cotangents) -> Gradients:
    """`loss = logsumexp(x) - sum(t * x)`: `dx = (softmax(x) - t) * g`, `dt = -x * g` (per row)."""
    (g,) = cotangents
    rows = tensor_type(op.result).get_shape()[0]
    column = reshape_to(e, g, [DYNAMIC if rows == DYNAMIC else rows, 1])
    return [
        lambda: e.mir.mul(e.mir.sub(e.mir.softmax(op.logits, axis=-1), op.targets), column),
        lambda: e.mir.mul(e.mir.neg(op.logits), column),
    ]
