"""VJP rules of reduce, softmax, cumsum and topk."""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import (
    cast_to,
    element_type,
    expand_to,
    keep_dims,
    reshape_to,
    scalar,
    static_dims,
    zeros_like,
)
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Cotangents, Gradients, Unsupported
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp, TopkOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC


def _kept(e: Emitter, op: ReduceOp, value: SSAValue) -> SSAValue:
    """A reduce result (or its gradient) with the reduced axes kept as size 1."""
    if op.keep_dim is not None:
        return value
    shape = tensor_type(op.input).get_shape()
    return reshape_to(e, value, keep_dims(shape, op.normalized_axes()))


def _sum_rule(e: Emitter, op: ReduceOp, g: SSAValue) -> SSAValue:
    """The gradient broadcast back over the reduced axes.

    `expand` can only keep a `?` dim it already has; a `?` reduced axis is
    restored by adding the kept gradient to zeros shaped like the input.
    """
    shape = tensor_type(op.input).get_shape()
    kept = _kept(e, op, g)
    if any(shape[a] == DYNAMIC for a in op.normalized_axes()):
        return e.mir.add(zeros_like(e, op.input), kept)
    return expand_to(e, kept, shape)


def _mean_rule(e: Emitter, op: ReduceOp, g: SSAValue) -> SSAValue:
    shape = tensor_type(op.input).get_shape()
    reduced = static_dims([shape[a] for a in op.normalized_axes()], "the reduced dims of a mean")
    return e.mir.mul(_sum_rule(e, op, g), scalar(e, 1 / math.prod(reduced), g))


def _chooser_rule(e: Emitter, op: ReduceOp, g: SSAValue) -> SSAValue:
    """max/min: the gradient goes to the elements equal to the result, split evenly among ties.

    With k tied maxima each gets `g / k` (as JAX's reduce_max): the gradient of
    the direction moving them together. RLX gives each the whole `g`.
    """
    x = op.input
    chosen = e.mir.cast(e.mir.compare(x, _kept(e, op, op.result), "eq"), element_type(g))
    count = e.mir.reduce(chosen, kind="sum", axes=list(op.normalized_axes()), keep_dim=True)
    return e.mir.mul(chosen, e.mir.div(_kept(e, op, g), count))


def _prod_rule(e: Emitter, op: ReduceOp, g: SSAValue) -> SSAValue:
    """prod: `dx_i = g * prod_{j != i} x_j`, exact when some `x_j` are zero.

    RLX's `g * y / x` divides by zero there. With `p` the product of the
    nonzero elements and `z` the number of zeros in the slice: no zero gives
    `p / x_i`; one zero gives `p` at the zero and 0 elsewhere; more give 0.
    """
    x = op.input
    axes = list(op.normalized_axes())
    zero, one = scalar(e, 0, x), scalar(e, 1, x)
    is_zero = e.mir.compare(x, zero, "eq")
    nonzero = e.mir.where(is_zero, one, x)
    p = e.mir.reduce(nonzero, kind="prod", axes=axes, keep_dim=True)
    zeros = e.mir.reduce(e.mir.cast(is_zero, element_type(x)), kind="sum", axes=axes, keep_dim=True)
    at_one_zero = e.mir.where(is_zero, p, zero)
    others = e.mir.where(
        e.mir.compare(zeros, zero, "eq"),
        e.mir.div(p, nonzero),
        e.mir.where(e.mir.compare(zeros, one, "eq"), at_one_zero, zero),
    )
    return e.mir.mul(cast_to(e, others, element_type(g)), _kept(e, op, g))


_REDUCE_RULES = {
    ReduceKind.SUM: _sum_rule,
    ReduceKind.MEAN: _mean_rule,
    ReduceKind.MAX: _chooser_rule,
    ReduceKind.MIN: _chooser_rule,
    ReduceKind.PROD: _prod_rule,
}


@VJP_RULES.register(ReduceOp)
def reduce(e: Emitter, op: ReduceOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    return [_REDUCE_RULES[op.kind.data](e, op, g)]


COMPLEX_RULES.add(ReduceOp, lambda op: op.kind.data in (ReduceKind.SUM, ReduceKind.MEAN))
"""Sums and means are linear: their rules hold for complex values."""


@VJP_RULES.register(SoftmaxOp)
def softmax(e: Emitter, op: SoftmaxOp, cotangents: Cotangents) -> Gradients:
    """`dx = y * (g - sum(y * g))` along the axis (the softmax Jacobian applied to g)."""
    (g,) = cotangents
    y = op.result
    dot = e.mir.reduce(e.mir.mul(y, g), kind="sum", axes=[op.normalized_axis()], keep_dim=True)
    return [e.mir.mul(y, e.mir.sub(g, dot))]


@VJP_RULES.register(CumsumOp)
def cumsum(e: Emitter, op: CumsumOp, cotangents: Cotangents) -> Gradients:
    """`mir.cumsum_backward`: the reversed running sum of `g`.

    The kernel sums from the end; the primitive form `sum(g) - cumsum(g)` would
    cancel digits in f32 on long axes.
    """
    (g,) = cotangents
    return [e.mir.cumsum_backward(g, axis=op.normalized_axis(), exclusive=op.exclusive is not None)]


def topk_onehot(e: Emitter, op: TopkOp, like: SSAValue, purpose: str) -> SSAValue:
    """`onehot[..., j, n] = (indices[..., j] == n)` in `like`'s element type, `[..., k, n]`
    (both modes' top-k rules; the last dim must be static to `purpose`)."""
    shape = tensor_type(op.input).get_shape()
    lead, n, k = shape[:-1], shape[-1], op.k.value.data
    if n == DYNAMIC:
        raise Unsupported(f"the last dim must be static to {purpose}")
    positions = e.mir.iota([n], "i64", dimension=0)
    column = reshape_to(e, op.indices, [*lead, k, 1])
    return e.mir.cast(e.mir.compare(column, positions, "eq"), element_type(like))


@VJP_RULES.register(TopkOp)
def topk(e: Emitter, op: TopkOp, cotangents: Cotangents) -> Gradients:
    """The values' gradient goes back to the positions they were taken from.

    With `onehot[..., j, n] = (indices[..., j] == n)`, the input's gradient is
    `g[..., None, :] @ onehot`. RLX gives top-k no gradient at all. The indices
    are integers, so only the values carry a gradient.
    """
    g, _ = cotangents
    if g is None:
        return [None]
    onehot = topk_onehot(e, op, g, "place the gradient")
    shape = tensor_type(op.input).get_shape()
    row = reshape_to(e, g, [*shape[:-1], 1, op.k.value.data])
    return [reshape_to(e, e.mir.matmul(row, onehot), shape)]
