"""Recipes of the attention MIR ops: attention (every mask kind, grouped KV heads) and rope."""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    floats_of_rank,
    is_float,
    rank,
    shape_of,
)


def attention_operands(s: GraphState) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue | None, dict]:
    """`(q, k, v, mask, properties)` of an attention: q `[B, H, Sq, D]`; k and v with a
    divisor of H as their head count; any mask kind, sometimes a scale and a soft-cap."""
    q = s.pick(floats_of_rank(4))
    if q is None:
        q = s.operand(s.shape(4, 4))
    batch, heads, q_len, head_dim = shape_of(q)
    et = element_type(q)
    kv_heads = s.choice(divisors(heads))
    kv_len = s.integer(1, MAX_DIM)
    k = s.operand((batch, kv_heads, kv_len, head_dim), et)
    v = s.operand((batch, kv_heads, kv_len, head_dim), et)
    mask_kind = s.choice(("none", "causal", "sliding_window", "custom", "bias"))
    options: dict[str, object] = {"num_heads": heads, "head_dim": head_dim, "mask_kind": mask_kind}
    mask = None
    if mask_kind == "sliding_window":
        options["window"] = s.integer(1, MAX_DIM)
    elif mask_kind == "custom":
        keep = s.rng().integers(0, 2, size=(batch, kv_len)).astype(np.float64)
        mask = s.emit(ConstantOp, dense(keep, et))
    elif mask_kind == "bias":
        mask = s.operand(s.choice([(q_len, kv_len), (batch, 1, q_len, kv_len)]), et)
    if s.flag():
        options["score_scale"] = s.choice((0.25, 0.5, 1.0))
    if s.flag():
        options["attn_logit_softcap"] = s.choice((5.0, 30.0))
    return q, k, v, mask, options


@RECIPES.register(AttentionOp)
def attention(s: GraphState, op: OpClass) -> None:
    q, k, v, mask, options = attention_operands(s)
    s.emit(op, q, k, v, mask, **options)


def rope_operands(s: GraphState) -> tuple[SSAValue, SSAValue, SSAValue, dict]:
    """`(x, cos, sin, properties)`: an even head dim; cos and sin cover the `n_rot`
    rotated dims of each position."""
    x = s.pick(lambda v: is_float(v) and rank(v) >= 2 and shape_of(v)[-1] % 2 == 0)
    if x is None:
        x = s.operand(s.shape(2, 3) + (s.choice((2, 4)),))
    seq, head_dim = shape_of(x)[-2:]
    n_rot = s.choice(range(2, head_dim + 1, 2))
    et = element_type(x)
    cos = s.operand((seq, n_rot // 2), et)
    sin = s.operand((seq, n_rot // 2), et)
    return x, cos, sin, {"head_dim": head_dim, "n_rot": n_rot}


@RECIPES.register(RopeOp)
def rope(s: GraphState, op: OpClass) -> None:
    x, cos, sin, options = rope_operands(s)
    s.emit(op, x, cos, sin, **options)
