"""`rlx-fuse-attention-block`: self-attention with its projections into `mir.fused_attention_block`.

RLX 0.2.2's `FuseAttentionBlock` is a no-op; newer RLX matches
`FMBA(qkv) -> narrow x3 -> Attention -> FMBA(out)`. This pass matches, rooted
at `mir.attention`, the chain `mir.fused_attention_block` stands for
(`fused.attention_block_chain`):

* q, k, v projections: three `narrow`s of one qkv projection (`matmul`, a
  `matmul` + rank <= 1 bias `add`, or an activation-free
  `fused_matmul_bias_act`), or three separate `matmul`s of one input (the
  LLaMA form; their weights are concatenated, a parameter-only op);
* each split into heads (`reshape` to `[B, S, heads, D]`, `transpose [0, 2, 1, 3]`);
* `rope` on q and k with the same tables, or on neither;
* grouped-query `repeat_kv` on k and v (a `concat` of single-head `narrow`s)
  is seen through: the fused op attends with `num_kv_heads` natively;
* heads merged (`transpose`, `reshape` to `[B, S, H*D]`) and projected
  (`matmul`, optional bias add, or an activation-free `fused_matmul_bias_act`).

Every intermediate must be used only inside the chain. The candidate op
infers its own type; it replaces the chain only when that equals the output
projection's type.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.dialects.mir.fused import FusedAttentionBlockOp, FusedMatmulBiasActOp
from rlx_xdsl.dialects.mir.shape import ConcatOp, NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import normalize_axis, shape_of
from rlx_xdsl.transforms.fusion.matching import (
    apply_patterns,
    in_block_order,
    owner_if,
    rank,
    sole_user,
    used_once_by,
)
from rlx_xdsl.transforms.fusion.matmul_bias_act import bias_of, fusable_bias
from rlx_xdsl.transforms.statistics import pattern_statistic

HEAD_PERM = [0, 2, 1, 3]


@dataclass
class Projection:
    """A linear projection found in the graph: `x @ w (+ bias)` and the ops computing it."""

    x: SSAValue
    w: SSAValue
    bias: SSAValue | None
    ops: list[Operation]
    result: SSAValue


def projection_producing(value: SSAValue) -> Projection | None:
    """The projection whose result is `value`: matmul, matmul + bias add, or activation-free FMBA."""
    owner = value.owner
    if isinstance(owner, FusedMatmulBiasActOp) and owner.kind is None and rank(owner.bias) <= 1:
        return Projection(owner.x, owner.w, owner.bias, [owner], value)
    if isinstance(owner, MatmulOp):
        return Projection(owner.lhs, owner.rhs, None, [owner], value)
    if isinstance(owner, AddOp):
        for product in (owner.lhs, owner.rhs):
            mm = owner_if(product, MatmulOp)
            if mm is not None and used_once_by(product, owner) and fusable_bias(product, bias_of(owner, product)):
                return Projection(mm.lhs, mm.rhs, bias_of(owner, product), [mm, owner], value)
    return None


def projection_consuming(value: SSAValue) -> Projection | None:
    """The projection of `value` (its only user): matmul [+ bias add], or activation-free FMBA."""
    user = sole_user(value)
    if isinstance(user, FusedMatmulBiasActOp) and user.x is value and user.kind is None and rank(user.bias) <= 1:
        return Projection(value, user.w, user.bias, [user], user.result)
    if not isinstance(user, MatmulOp) or user.lhs is not value:
        return None
    add = sole_user(user.result)
    if isinstance(add, AddOp) and fusable_bias(user.result, bias_of(add, user.result)):
        return Projection(value, user.rhs, bias_of(add, user.result), [user, add], add.result)
    return Projection(value, user.rhs, None, [user], user.result)


@dataclass
class HeadInput:
    """Where one of attention's q/k/v comes from: a projected value split into heads."""

    source: SSAValue
    heads: int
    rope: RopeOp | None
    ops: list[Operation] = field(default_factory=list)


def see_through_repeat_kv(value: SSAValue, num_heads: int, ops: list[Operation]) -> tuple[SSAValue, int] | None:
    """`(kv, Hkv)` when `value` is `repeat_kv(kv)`: a concat along heads of single-head narrows of
    `kv` in the order GQA reads them (head j repeated `num_heads / Hkv` times); else `(value, heads)`."""
    concat = owner_if(value, ConcatOp)
    if concat is None or rank(value) != 4 or normalize_axis(concat.axis.value.data, 4) != 1:
        return value, shape_of(value.type)[1]
    narrows = [owner_if(v, NarrowOp) for v in concat.inputs]
    if any(n is None for n in narrows) or len({n.input for n in narrows}) != 1:
        return None
    kv = narrows[0].input
    kv_heads = shape_of(kv.type)[1]
    if kv_heads < 1 or num_heads % kv_heads or len(narrows) != num_heads:
        return None
    rep = num_heads // kv_heads
    expected_starts = [j for j in range(kv_heads) for _ in range(rep)]
    if any(
        normalize_axis(n.axis.value.data, 4) != 1 or n.len.value.data != 1 or n.start.value.data != start
        for n, start in zip(narrows, expected_starts)
    ):
        return None
    distinct = set(narrows)
    if any(use.operation is not concat for n in distinct for use in n.result.uses):
        return None
    ops.extend([concat, *distinct])
    return kv, kv_heads


def head_input(value: SSAValue, attention: AttentionOp, num_heads: int, repeat_ok: bool) -> HeadInput | None:
    """Trace q, k or v back through [repeat_kv], [rope], transpose and reshape to the projected value."""
    ops: list[Operation] = []
    if not used_once_by(value, attention):
        return None
    heads = num_heads
    if repeat_ok:
        seen = see_through_repeat_kv(value, num_heads, ops)
        if seen is None:
            return None
        value, heads = seen
        if ops and not uses_only(value, set(ops)):
            return None
    rope = owner_if(value, RopeOp)
    if rope is not None:
        ops.append(rope)
        value = rope.x
        if not used_once_by(value, rope):
            return None
    transpose = owner_if(value, TransposeOp)
    if transpose is None or list(transpose.perm.get_values()) != HEAD_PERM:
        return None
    reshape = owner_if(transpose.input, ReshapeOp)
    if reshape is None or not used_once_by(transpose.input, transpose) or rank(transpose.input) != 4:
        return None
    if not used_once_by(reshape.input, reshape) or rank(reshape.input) != 3:
        return None
    ops += [transpose, reshape]
    return HeadInput(reshape.input, heads, rope, ops)


def uses_only(value: SSAValue, users: set[Operation]) -> bool:
    return all(use.operation in users for use in value.uses)


def shared_qkv(inputs: list[HeadInput], ops: list[Operation]) -> Projection | None:
    """The one qkv projection the three inputs are `narrow`s of, in q, k, v order along the last axis."""
    narrows = [owner_if(h.source, NarrowOp) for h in inputs]
    if any(n is None for n in narrows) or len({n.input for n in narrows}) != 1:
        return None
    qkv = narrows[0].input
    width = shape_of(qkv.type)[-1]
    start = 0
    for n in narrows:
        if normalize_axis(n.axis.value.data, rank(qkv)) != rank(qkv) - 1 or n.start.value.data != start:
            return None
        start += n.len.value.data
    if start != width or not uses_only(qkv, set(narrows)):
        return None
    projection = projection_producing(qkv)
    if projection is None:
        return None
    ops += narrows
    return projection


def separate_projections(inputs: list[HeadInput], ops: list[Operation]) -> tuple[SSAValue, list[SSAValue]] | None:
    """`(x, [w_q, w_k, w_v])` when q, k and v are bias-free matmuls of one `x` (LLaMA's form)."""
    matmuls = [owner_if(h.source, MatmulOp) for h in inputs]
    if any(m is None for m in matmuls) or len({m.lhs for m in matmuls}) != 1:
        return None
    weights = [m.rhs for m in matmuls]
    if any(rank(w) != 2 for w in weights) or len({w.type.element_type for w in weights}) != 1:
        return None
    ops += matmuls
    return matmuls[0].lhs, weights


class FuseAttentionBlock(RewritePattern):
    """The projections, head splits, rope and attention chain become `mir.fused_attention_block`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, attention: AttentionOp, rewriter: PatternRewriter) -> None:
        heads = attention.num_heads.value.data
        chain: list[Operation] = [attention]
        inputs = [
            head_input(attention.q, attention, heads, repeat_ok=False),
            head_input(attention.k, attention, heads, repeat_ok=True),
            head_input(attention.v, attention, heads, repeat_ok=True),
        ]
        if any(h is None for h in inputs):
            return
        q, k, v = inputs
        if v.rope is not None or (q.rope is None) != (k.rope is None) or k.heads != v.heads:
            return
        if q.rope is not None and not same_rope(q.rope, k.rope):
            return
        for h in inputs:
            chain += h.ops
        output = merged_output(attention, chain)
        if output is None:
            return
        qkv = shared_qkv(inputs, chain)
        separate = None if qkv is not None else separate_projections(inputs, chain)
        if qkv is None and separate is None:
            return
        if qkv is not None:
            chain += qkv.ops
        tail = output.result.owner
        ordered = in_block_order(set(chain), tail)
        e = Emitter.replacing(tail, rewriter).fused(ordered)
        if qkv is not None:
            hidden, qkv_w, qkv_bias = qkv.x, qkv.w, qkv.bias
        else:
            hidden, weights = separate
            qkv_w, qkv_bias = ConcatOp(*weights, axis=1), None
        candidate = build_block(attention, hidden, qkv_w, qkv_bias, output, q.rope, k.heads)
        if candidate is None or candidate.result.type != output.result.type:
            discard(candidate, qkv_w)
            return
        if not isinstance(qkv_w, SSAValue):
            e.insert(qkv_w)
        e.replace(tail, e.emit(candidate))
        for op in reversed(ordered[:-1]):
            rewriter.erase(op)


def same_rope(a: RopeOp, b: RopeOp) -> bool:
    return a.cos is b.cos and a.sin is b.sin and a.n_rot.value.data == b.n_rot.value.data


def merged_output(attention: AttentionOp, chain: list[Operation]) -> Projection | None:
    """The heads merged back (`transpose`, `reshape` to 3-D) and projected."""
    transpose = sole_user(attention.result)
    if not isinstance(transpose, TransposeOp) or list(transpose.perm.get_values()) != HEAD_PERM:
        return None
    reshape = sole_user(transpose.result)
    if not isinstance(reshape, ReshapeOp) or rank(reshape.result) != 3:
        return None
    projection = projection_consuming(reshape.result)
    if projection is None:
        return None
    chain += [transpose, reshape, *projection.ops]
    return projection


def build_block(attention, hidden, qkv_w, qkv_bias, output, rope, kv_heads) -> FusedAttentionBlockOp | None:
    """The fused op, or None when its rules reject these operands."""
    weight = qkv_w if isinstance(qkv_w, SSAValue) else qkv_w.result
    try:
        return FusedAttentionBlockOp(
            hidden, weight, output.w, attention.mask, qkv_bias, output.bias,
            rope.cos if rope else None, rope.sin if rope else None,
            num_kv_heads=kv_heads, n_rot=rope.n_rot.value.data if rope else None,
            **_attention_properties(attention),
        )  # fmt: skip
    except VerifyException:
        return None


def _attention_properties(attention: AttentionOp) -> dict:
    props = {
        "num_heads": attention.num_heads.value.data,
        "head_dim": attention.head_dim.value.data,
        "mask_kind": attention.kind,
    }
    for name in ("window", "score_scale", "attn_logit_softcap"):
        value = getattr(attention, name)
        if value is not None:
            props[name] = value.value.data
    return props


def discard(candidate: Operation | None, qkv_w) -> None:
    """Drop a rejected candidate and the weight concat made for it (they hold operand uses)."""
    if candidate is not None:
        candidate.erase()
    if not isinstance(qkv_w, SSAValue):
        qkv_w.erase()


@dataclass(frozen=True)
class FuseAttentionBlockPass(ModulePass):
    """Fuse qkv projection(s) -> head split -> (rope) -> attention -> merge -> out projection
    into mir.fused_attention_block.

    A real fusion (RLX 0.2.2's FuseAttentionBlock is a no-op); sees through
    grouped-query repeat_kv and accepts separate q/k/v matmuls of one input.
    """

    name = "rlx-fuse-attention-block"
    STATISTICS = (pattern_statistic(FuseAttentionBlock),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseAttentionBlock())
