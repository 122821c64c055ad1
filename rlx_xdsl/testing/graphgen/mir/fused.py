"""Recipes of the fused MIR ops: weights and norm parameters are usually parameters."""

from __future__ import annotations

from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.elementwise import activation_op
from rlx_xdsl.dialects.mir.fused import (
    FusedMatmulBiasActOp,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import (
    element_type,
    float_min_rank,
    is_float,
    rank,
    shape_of,
)

# Activations that stay finite on any finite input (log/sqrt/rsqrt need positive inputs).
TAME_ACTIVATIONS = tuple(a for a in Activation if a not in (Activation.LOG, Activation.SQRT, Activation.RSQRT))


@RECIPES.register(FusedMatmulBiasActOp)
def fused_matmul_bias_act(s: GraphState, op: OpClass) -> None:
    """`x[..., k]` from the pool, a new `[k, n]` weight and a bias of `[n]`, `[1, n]` or `[]`."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    n = s.integer(1, MAX_DIM)
    w = s.operand((k, n), et, param=True)
    bias = s.operand(s.choice(((n,), (1, n), ())), et, param=True)
    kind = s.choice((None, *TAME_ACTIVATIONS))
    if kind is not None and activation_op(kind).FLOAT_ONLY and not is_float(x):
        kind = None
    s.emit(op, x, w, bias, activation=kind)


@RECIPES.register(FusedSwigluOp)
def fused_swiglu(s: GraphState, op: OpClass) -> None:
    """A float value whose last dim is even (from the pool or new); sometimes cast to another float."""
    x = s.pick(lambda v: is_float(v) and rank(v) >= 1 and shape_of(v)[-1] % 2 == 0)
    if x is None:
        x = s.operand((*s.shape(0, 2), 2 * s.integer(1, MAX_DIM)))
    cast_to = s.choice((None, "f32", "f16", "bf16"))
    s.emit(op, x, gate_first=s.flag(), cast_to=cast_to)


@RECIPES.register(FusedResidualRmsNormOp)
def fused_residual_norm(s: GraphState, op: OpClass) -> None:
    """x from the pool, a residual of its shape, an optional bias of its last dim, norm parameters."""
    x = s.need(float_min_rank(1))
    shape, et = shape_of(x), element_type(x)
    residual = s.operand(shape, et)
    bias = s.operand(shape[-1:], et, param=True) if s.flag() else None
    axis = s.axis(len(shape))
    gamma = s.operand(shape[axis:], et, param=True)
    beta = s.operand(shape[axis:], et, param=True)
    s.emit(op, x, residual, gamma, beta, bias, axis=axis, eps=s.choice((1e-5, 1e-6)))
