"""Lowering of MIR attention and rope.

Attention becomes two contractions around a masked softmax. Grouped-query
attention needs no copies of k and v: q's head dim H is split into
`[Hkv, H / Hkv]` with `tensor.expand_shape` (query head `h` reads kv head
`h // (H / Hkv)`, which is exactly that split), so every loop nest indexes k
and v by the kv-head loop alone. Scores stay in f32 for f16/bf16 inputs.

Rope slices the rotated halves, combines them with cos and sin in one
elementwise generic each, and concatenates the pass-through tail.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from rlx_xdsl.conversions.mir_to_linalg.contraction import contract
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import BOOL, Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import (
    PARALLEL,
    Dim,
    Tensors,
    identity,
    loops,
)
from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind, RopeOp
from rlx_xdsl.dtypes import DType

# Loops of the score nest: batch, kv head, query head within the group, query, key.
B, G, R, I, J = range(5)
HEAD_SPLIT = [[0], [1, 2], [3], [4]]
"""Reassociation splitting dim 1 (heads) of a rank-4 tensor into (kv head, head in group)."""


@LOWERINGS.register(AttentionOp)
def lower_attention(lw: Lowering, op: AttentionOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    acc = accumulator(dt)
    batch, heads, sq, d = lw.dims(op.q)
    _, kv_heads, sk, _ = lw.dims(op.k)
    group = lw.quotient(heads, kv_heads)
    q = lw.expand(op.q, HEAD_SPLIT, [batch, kv_heads, group, sq, d])
    score_dims = [batch, kv_heads, group, sq, sk]
    scores = contract(
        lw,
        [(q, dt, [B, G, R, I, 5]), (op.k, lw.operand_dtype(1), [B, G, J, 5])],
        [*score_dims, d],
        [5],
        acc,
    )
    scores = _masked_scores(lw, op, scores, acc, score_dims)
    probs = _softmax_or_zero(lw, scores, acc)
    out = contract(
        lw,
        [(probs, acc, [B, G, R, I, 5]), (op.v, lw.operand_dtype(2), [B, G, 5, 4])],
        [batch, kv_heads, group, sq, d, sk],
        [5],
        acc,
    )
    return [lw.convert(lw.collapse(out, HEAD_SPLIT), acc, dt)]


def _masked_scores(
    lw: Lowering, op: AttentionOp, scores: SSAValue, acc: DType, dims: Sequence[Dim]
) -> SSAValue:
    """`mask(softcap(scores * scale))`: masked-out positions become -inf."""
    inputs: list[tuple[SSAValue, AffineMap]] = [(scores, identity(5))]
    if op.mask is not None:
        inputs.append(_mask_operand(lw, op.mask, op.kind, dims))
    mask_dt = lw.operand_dtype(3) if op.mask is not None else None
    kind = op.kind
    sq, sk = dims[I], dims[J]
    offset = lw.emit(arith.SubiOp(lw.index_value(sk), lw.index_value(sq)))  # query i sits at key i + offset
    window = op.window.value.data if op.window is not None else None
    cap = op.attn_logit_softcap.value.data if op.attn_logit_softcap is not None else None

    def body(s: Scalars, score: SSAValue, *rest: SSAValue) -> SSAValue:
        x = s.mul(score, s.constant(op.scale(), acc), acc)
        if cap is not None:
            x = s.mul(s.constant(cap, acc), s.tanh(s.div(x, s.constant(cap, acc), acc)), acc)
        if kind == MaskKind.BIAS:
            x = s.add(x, s.cast(rest[0], mask_dt, acc), acc)
        keep = None
        if kind == MaskKind.CUSTOM:
            keep = s.compare("ge", s.cast(rest[0], mask_dt, acc), s.constant(0.5, acc), acc)
        if kind in (MaskKind.CAUSAL, MaskKind.SLIDING_WINDOW):
            position = s.emit(arith.AddiOp(s.loop_index(I), offset))
            key = s.loop_index(J)
            keep = s.index_compare("le", key, position)
            if window is not None:
                in_window = s.index_compare(
                    "gt", s.emit(arith.AddiOp(key, s.index_constant(window))), position
                )
                keep = s.mul(keep, in_window, BOOL)
        if keep is not None:
            x = s.select(keep, x, s.constant(float("-inf"), acc))
        return x

    init = lw.empty(dims, acc)
    return lw.generic(inputs, [(init, identity(5))], [PARALLEL] * 5, body)[0]


def _mask_operand(
    lw: Lowering, mask: SSAValue, kind: MaskKind, dims: Sequence[Dim]
) -> tuple[SSAValue, AffineMap]:
    """The mask and its map over the score loops.

    A custom mask is `[batch, keys]`. A bias broadcasts to `[B, H, Sq, Sk]`; a head
    dim of its own is split into (kv head, head in group) like q's.
    """
    if kind == MaskKind.CUSTOM:
        return mask, loops(5, [B, J])
    shape = mask.type.get_shape()
    lead = 4 - len(shape)
    loop_of = [B, None, I, J]
    size_of = [dims[B], None, dims[I], dims[J]]
    results: list[int | None] = []
    split_at = None
    for k, d in enumerate(shape):
        axis = lead + k
        if axis == 1 and d != 1:
            split_at = k
            results += [G, R]
        elif d == 1 and (axis == 1 or size_of[axis] != 1):
            results.append(None)  # broadcast
        else:
            results.append(loop_of[axis])
    if split_at is not None:
        mask_dims = lw.dims(mask)
        groups = [[i + (i > split_at)] for i in range(len(shape))]
        groups[split_at] = [split_at, split_at + 1]
        split_dims = [*mask_dims[:split_at], dims[G], dims[R], *mask_dims[split_at + 1 :]]
        mask = lw.expand(mask, groups, split_dims)
    return mask, loops(5, results)


def _softmax_or_zero(lw: Tensors, scores: SSAValue, acc: DType) -> SSAValue:
    """Softmax over the key loop; a row whose scores are all -inf gives zeros, not NaN."""
    dims = lw.dims(scores)
    row = loops(5, [B, G, R, I])
    peak = lw.reduce([(scores, identity(5))], dims, [J], acc, float("-inf"), lambda s, x, m: s.max(m, x, acc))

    def shifted_exp(s: Scalars, x: SSAValue, m: SSAValue) -> SSAValue:
        empty_row = s.compare("eq", m, s.constant(float("-inf"), acc), acc)
        return s.exp(s.sub(x, s.select(empty_row, s.constant(0.0, acc), m), acc))

    total = lw.reduce(
        [(scores, identity(5)), (peak, row)], dims, [J], acc, 0.0,
        lambda s, x, m, t: s.add(t, shifted_exp(s, x, m), acc),
    )  # fmt: skip

    def normalise(s: Scalars, x: SSAValue, m: SSAValue, t: SSAValue, _: SSAValue) -> SSAValue:
        zero = s.compare("eq", t, s.constant(0.0, acc), acc)
        return s.div(shifted_exp(s, x, m), s.select(zero, s.constant(1.0, acc), t), acc)

    init = lw.empty(dims, acc)
    return lw.generic(
        [(scores, identity(5)), (peak, row), (total, row)], [(init, identity(5))], [PARALLEL] * 5, normalise
    )[0]


@LOWERINGS.register(RopeOp)
def lower_rope(lw: Lowering, op: RopeOp) -> Sequence[SSAValue]:
    """`[x1 cos - x2 sin, x2 cos + x1 sin, x[n_rot:]]` with `x1, x2` the two rotated halves."""
    dt = lw.result_dtype()
    half = op.n_rot.value.data // 2
    dims = lw.dims(op.x)
    rank = len(dims)
    zeros: list[Dim] = [0] * (rank - 1)

    def last(start: int, size: int) -> SSAValue:
        return lw.extract_slice(op.x, [*zeros, start], [*dims[:-1], size])

    x1, x2 = last(0, half), last(half, half)
    out_dims = [*dims[:-1], half]
    operands = [x1, x2, op.cos, op.sin]
    first = lw.map_elements(
        operands, out_dims, dt, lambda s, a, b, c, n, _: s.sub(s.mul(a, c, dt), s.mul(b, n, dt), dt)
    )
    second = lw.map_elements(
        operands, out_dims, dt, lambda s, a, b, c, n, _: s.add(s.mul(b, c, dt), s.mul(a, n, dt), dt)
    )
    parts = [first, second]
    head_dim = op.head_dim.value.data
    if 2 * half < head_dim:
        parts.append(last(2 * half, head_dim - 2 * half))
    return [lw.concat(parts, rank - 1)]
