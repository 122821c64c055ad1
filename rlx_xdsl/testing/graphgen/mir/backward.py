"""Recipes of the MIR backward kernels: the forward operands as the forward recipes pick
them, and a cotangent `dy` of the forward result's shape.

Where the forward result's shape takes arithmetic to know (conv, pool, gather),
the recipe emits the forward op itself and reads its type, as a training graph
holds the forward op next to its gradient.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.attention import AttentionOp
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp
from rlx_xdsl.dialects.mir.indexing import GatherOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.mir.attention import attention_operands, rope_operands
from rlx_xdsl.testing.graphgen.mir.conv import conv_operands, pool_options
from rlx_xdsl.testing.graphgen.mir.elementwise import positive
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import MAX_RANK, GraphState
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    float_min_rank,
    floats_of_rank,
    is_float,
    rank,
    shape_of,
)

POSITIVE_DOMAIN = (Activation.LOG, Activation.SQRT, Activation.RSQRT, Activation.LOG1P)


def cotangent(s: GraphState, like: SSAValue) -> SSAValue:
    """A `dy` of `like`'s shape and dtype: from the pool, a new input or a constant."""
    return s.operand(shape_of(like), element_type(like))


@RECIPES.register(bw.ReluBackwardOp)
def relu_backward(s: GraphState, op: OpClass) -> None:
    x = s.need(is_float)
    s.emit(op, x, cotangent(s, x))


@RECIPES.register(bw.ActivationBackwardOp)
def activation_backward(s: GraphState, op: OpClass) -> None:
    """Any kind; log, sqrt, rsqrt and log1p get a positive `x` (`abs(x) + 1`)."""
    x = s.need(is_float)
    kind = s.choice(list(Activation))
    if kind in POSITIVE_DOMAIN:
        x = positive(s, x)
    s.emit(op, x, cotangent(s, x), kind=kind)


@RECIPES.register(bw.LayerNormBackwardInputOp, bw.RmsNormBackwardInputOp)
def axis_norm_input(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(1))
    axis = s.axis(rank(x))
    gamma = s.operand(shape_of(x)[axis:], element_type(x), param=True)
    s.emit(op, x, gamma, cotangent(s, x), axis=axis, eps=s.choice((1e-5, 1e-6)))


@RECIPES.register(bw.LayerNormBackwardGammaOp, bw.RmsNormBackwardGammaOp)
def axis_norm_gamma(s: GraphState, op: OpClass) -> None:
    x = s.need(float_min_rank(1))
    s.emit(op, x, cotangent(s, x), axis=s.axis(rank(x)), eps=s.choice((1e-5, 1e-6)))


@RECIPES.register(bw.RmsNormBackwardBetaOp)
def rms_norm_beta(s: GraphState, op: OpClass) -> None:
    dy = s.need(float_min_rank(1))
    s.emit(op, dy, axis=s.axis(rank(dy)))


def _group_norm_input(s: GraphState) -> SSAValue:
    """A float `[N, C, spatial...]` value, from the pool or new."""
    return s.pick(float_min_rank(3)) or s.operand(s.shape(3, MAX_RANK))


@RECIPES.register(bw.GroupNormBackwardInputOp)
def group_norm_input(s: GraphState, op: OpClass) -> None:
    x = _group_norm_input(s)
    channels = shape_of(x)[1]
    gamma = s.operand((channels,), element_type(x), param=True)
    s.emit(op, x, gamma, cotangent(s, x), num_groups=s.choice(divisors(channels)), eps=1e-5)


@RECIPES.register(bw.GroupNormBackwardGammaOp)
def group_norm_gamma(s: GraphState, op: OpClass) -> None:
    x = _group_norm_input(s)
    s.emit(op, x, cotangent(s, x), num_groups=s.choice(divisors(shape_of(x)[1])), eps=1e-5)


@RECIPES.register(bw.GroupNormBackwardBetaOp)
def group_norm_beta(s: GraphState, op: OpClass) -> None:
    s.emit(op, _group_norm_input(s))


@RECIPES.register(bw.RopeBackwardOp)
def rope_backward(s: GraphState, op: OpClass) -> None:
    dy, cos, sin, options = rope_operands(s)
    s.emit(op, dy, cos, sin, **options)


@RECIPES.register(bw.AttentionBackwardOp)
def attention_backward(s: GraphState, op: OpClass) -> None:
    """Every mask kind, grouped KV heads, scale and soft-cap, with respect to q, k or v."""
    q, k, v, mask, options = attention_operands(s)
    forward = s.emit(AttentionOp, q, k, v, mask, **options)
    wrt = s.choice(("query", "key", "value"))
    s.emit(op, q, k, v, cotangent(s, forward), mask, wrt=wrt, **options)


@RECIPES.register(bw.ConvBackwardInputOp, bw.ConvBackwardWeightOp)
def conv_backward(s: GraphState, op: OpClass) -> None:
    x, w, options = conv_operands(s)
    dy = cotangent(s, s.emit(ConvOp, x, w, **options))
    if op is bw.ConvBackwardInputOp:
        s.emit(op, dy, w, input_size=shape_of(x)[2:], **options)
    else:
        s.emit(op, x, dy, **options)


@RECIPES.register(bw.PoolBackwardOp)
def pool_backward(s: GraphState, op: OpClass) -> None:
    x = s.pick(floats_of_rank(4)) or s.operand(s.shape(4, 4))  # float: the gradient is
    options = pool_options(s, x)
    s.emit(op, x, cotangent(s, s.emit(PoolOp, x, **options)), **options)


@RECIPES.register(bw.CumsumBackwardOp)
def cumsum_backward(s: GraphState, op: OpClass) -> None:
    dy = s.need(float_min_rank(1))
    s.emit(op, dy, axis=s.axis(rank(dy)), exclusive=s.flag())


@RECIPES.register(bw.GatherBackwardOp)
def gather_backward(s: GraphState, op: OpClass) -> None:
    """The gradient of a gather of a float table: dy has the gather's result shape."""
    table = s.need(float_min_rank(1))
    shape = shape_of(table)
    axis = s.integer(0, len(shape) - 1)
    index_shape = s.shape(0, min(2, MAX_RANK + 1 - len(shape)))
    (indices,) = with_ids(s, GatherOp, index_shape, shape[axis], table=table)[1:]
    gathered = s.emit(GatherOp, table, indices, axis=axis)
    s.emit(op, cotangent(s, gathered), indices, axis=axis, dim_size=shape[axis])


@RECIPES.register(bw.StopGradientOp)
def stop_gradient(s: GraphState, op: OpClass) -> None:
    s.emit(op, s.need())
