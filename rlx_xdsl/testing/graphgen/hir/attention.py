"""Recipes of `hir.attention` (every mask kind, grouped KV heads) and `hir.rope`."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.hir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
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


def mask_options(s: GraphState, batch: int, heads: int, q_len: int, kv_len: int, et) -> tuple:
    """A mask kind with its `window` or mask operand: `(mask, {"mask_kind": ..., "window": ...})`."""
    kind = s.choice(("none", "causal", "sliding_window", "custom", "bias"))
    options: dict[str, object] = {"mask_kind": kind}
    mask = None
    if kind == "sliding_window":
        options["window"] = s.integer(1, MAX_DIM)
    elif kind == "custom":
        keep = s.rng().integers(0, 2, size=(batch, kv_len)).astype(np.float64)
        mask = s.emit(ConstantOp, dense(keep, et))
    elif kind == "bias":
        mask = s.operand(
            s.choice([(q_len, kv_len), (batch, 1, q_len, kv_len), (batch, heads, q_len, kv_len)]), et
        )
    return mask, options


@RECIPES.register(AttentionOp)
def attention(s: GraphState, op: type) -> None:
    """q `[B, H, Sq, D]`; k and v with a divisor of H as their head count."""
    q = s.pick(floats_of_rank(4))
    if q is None:
        q = s.operand(s.shape(4, 4))
    batch, heads, q_len, head_dim = shape_of(q)
    et = element_type(q)
    kv_heads, kv_len = s.choice(divisors(heads)), s.integer(1, MAX_DIM)
    k, v = (s.operand((batch, kv_heads, kv_len, head_dim), et) for _ in range(2))
    mask, options = mask_options(s, batch, heads, q_len, kv_len, et)
    s.emit(op, q, k, v, mask, num_heads=heads, head_dim=head_dim, **options)


@RECIPES.register(RopeOp)
def rope(s: GraphState, op: type) -> None:
    """An even head dim; cos and sin cover the `n_rot` rotated dims of each position."""
    x = s.pick(lambda v: is_float(v) and rank(v) >= 2 and shape_of(v)[-1] % 2 == 0)
    if x is None:
        x = s.operand(s.shape(2, 3) + (s.choice((2, 4)),))
    seq, head_dim = shape_of(x)[-2:]
    n_rot = s.choice(range(2, head_dim + 1, 2))
    et = element_type(x)
    cos, sin = (s.operand((seq, n_rot // 2), et) for _ in range(2))
    s.emit(op, x, cos, sin, head_dim=head_dim, n_rot=n_rot)
