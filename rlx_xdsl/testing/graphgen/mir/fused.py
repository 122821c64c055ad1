"""Recipes of the fused MIR ops: weights and norm parameters are usually parameters."""

from __future__ import annotations

import numpy as np
from xdsl.ir import Attribute, SSAValue

from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.elementwise import ConstantOp, activation_op
from rlx_xdsl.dialects.mir.fused import (
    FusedAttentionBlockOp,
    FusedMatmulBiasActOp,
    FusedResidualLayerNormOp,
    FusedResidualRmsNormOp,
    FusedSwigluOp,
    FusedTransformerLayerOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    float_min_rank,
    floats_of_rank,
    is_float,
    rank,
    shape_of,
)

# Activations that stay finite on any finite input (log/sqrt/rsqrt need positive inputs, log1p x > -1).
TAME_ACTIVATIONS = tuple(
    a for a in Activation if a not in (Activation.LOG, Activation.SQRT, Activation.RSQRT, Activation.LOG1P)
)


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


@RECIPES.register(FusedResidualRmsNormOp, FusedResidualLayerNormOp)
def fused_residual_norm(s: GraphState, op: OpClass) -> None:
    """x from the pool, a residual of its shape, an optional bias of its last dim, norm parameters;
    sometimes the sum as a second result."""
    x = s.need(float_min_rank(1))
    shape, et = shape_of(x), element_type(x)
    residual = s.operand(shape, et)
    bias = s.operand(shape[-1:], et, param=True) if s.flag() else None
    axis = s.axis(len(shape))
    gamma = s.operand(shape[axis:], et, param=True)
    beta = s.operand(shape[axis:], et, param=True)
    s.emit(op, x, residual, gamma, beta, bias, axis=axis, eps=s.choice((1e-5, 1e-6)), keep_sum=s.flag())


def _mask(s: GraphState, et: Attribute, batch: int, heads: int, seq: int) -> tuple[str, SSAValue | None]:
    """A mask kind and, for custom/bias kinds, its operand (custom keeps are 0/1 constants)."""
    kind = s.choice(("none", "causal", "custom", "bias"))
    if kind == "custom":
        keep = s.rng().integers(0, 2, size=(batch, seq)).astype(np.float64)
        return kind, s.emit(ConstantOp, dense(keep, et))
    if kind == "bias":
        return kind, s.operand(s.choice([(seq, seq), (batch, 1, seq, seq)]), et)
    return kind, None


def _hidden(s: GraphState) -> SSAValue:
    """`[B, S, E]` activations: a rank-3 float from the pool, or a new input."""
    hidden = s.pick(floats_of_rank(3))
    return hidden if hidden is not None else s.operand((s.integer(1, 2), s.integer(1, MAX_DIM), s.integer(1, MAX_DIM)))


@RECIPES.register(FusedAttentionBlockOp)
def fused_attention_block(s: GraphState, op: OpClass) -> None:
    """Random heads (grouped KV heads sometimes), optional biases, rope and mask."""
    hidden = _hidden(s)
    batch, seq, embed = shape_of(hidden)
    et = element_type(hidden)
    heads, head_dim = s.integer(1, 2), s.choice((2, 4))
    kv_heads = s.choice(divisors(heads))
    width = (heads + 2 * kv_heads) * head_dim
    qkv_w = s.operand((embed, width), et, param=True)
    out_w = s.operand((heads * head_dim, s.integer(1, MAX_DIM)), et, param=True)
    qkv_bias = s.operand((width,), et, param=True) if s.flag() else None
    out_bias = s.operand((shape_of(out_w)[-1],), et, param=True) if s.flag() else None
    cos = sin = None
    if s.flag():
        cos, sin = (s.operand((seq, head_dim // 2), et) for _ in range(2))
    kind, mask = _mask(s, et, batch, heads, seq)
    s.emit(
        op, hidden, qkv_w, out_w, mask, qkv_bias, out_bias, cos, sin,
        num_heads=heads, num_kv_heads=kv_heads, head_dim=head_dim, mask_kind=kind,
    )  # fmt: skip


@RECIPES.register(FusedTransformerLayerOp)
def fused_transformer_layer(s: GraphState, op: OpClass) -> None:
    """A small BERT layer on `[B, S, E]` with E = heads * head_dim, biases all or none."""
    heads, head_dim = s.integer(1, 2), s.choice((1, 2))
    embed = heads * head_dim
    hidden = s.pick(lambda v: floats_of_rank(3)(v) and shape_of(v)[-1] == embed)
    if hidden is None:
        hidden = s.operand((s.integer(1, 2), s.integer(1, MAX_DIM), embed))
    batch, seq, _ = shape_of(hidden)
    et = element_type(hidden)
    inner = s.integer(1, MAX_DIM)

    def param(*shape: int) -> SSAValue:
        return s.operand(shape, et, param=True)

    weights = [param(embed, 3 * embed), param(embed, embed), param(embed), param(embed)]
    weights += [param(embed, inner), param(inner, embed), param(embed), param(embed)]
    biases = [param(3 * embed), param(embed), param(inner), param(embed)] if s.flag() else [None] * 4
    kind, mask = _mask(s, et, batch, heads, seq)
    activation = s.choice((Activation.GELU, Activation.RELU, Activation.SILU))
    s.emit(
        op, hidden, *weights, mask, *biases,
        num_heads=heads, head_dim=head_dim, activation=activation, eps1=1e-5, eps2=1e-5, mask_kind=kind,
    )  # fmt: skip
