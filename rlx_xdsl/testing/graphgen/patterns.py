"""Fusable patterns for random graphs, and near misses of them.

Random op-by-op graphs almost never contain a matmul followed by a bias add
and a gelu, or a SwiGLU, so fusion passes would only ever see graphs they
leave alone. A *pattern recipe* `pattern(state)` emits the primitive chain one
fusion matches, and with some probability a near miss of it: an intermediate
with a second consumer (or returned by the function), an activation the pass
does not fuse, a rank-2 bias, a gate matmul declared before the up matmul,
narrows that do not split a value in halves...

    graphs(max_ops=8, patterns=PATTERNS)         # ops and patterns mixed
    graphs(max_ops=4, ops=[], patterns=PATTERNS)  # patterns only

Every pattern draws through the `GraphState`, so graphs stay reproducible and
shrinkable. Values are f32 (sometimes bf16) and small. A pattern returns the
values it exposes (its result, and any value it deliberately gave a second
consumer): only those may become outputs or operands of later steps, so a
pattern is spoiled only when a near miss is drawn.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import (
    AddOp,
    CompareOp,
    ConstantOp,
    ExpOp,
    GeluOp,
    MulOp,
    NegOp,
    ReluOp,
    SigmoidOp,
    SiluOp,
    SubOp,
    TanhOp,
    WhereOp,
)
from rlx_xdsl.dialects.mir.norm import LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.shape import ConcatOp, NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.dialects.mir.vision import ResizeNearest2xOp
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState, dense
from rlx_xdsl.testing.graphgen.values import element_type, float_min_rank, rank, shape_of

PatternRecipe = Callable[[GraphState], None]


def exposing(build: Callable[[GraphState], list[SSAValue]]) -> PatternRecipe:
    """Run `build`, then hide the intermediates it produced except the values it returns."""

    def recipe(s: GraphState) -> None:
        produced, pool = len(s.produced), len(s.pool)
        exposed = [v for v in build(s) if v is not None]
        s.produced[produced:] = [v for v in s.produced[produced:] if v in exposed]
        s.pool[pool:] = [v for v in s.pool[pool:] if v in exposed]

    recipe.__name__ = build.__name__
    recipe.__doc__ = build.__doc__
    return recipe


def near_miss(s: GraphState) -> bool:
    """Whether to spoil the pattern this time (one draw in four)."""
    return s.integer(0, 3) == 0


def extra_consumer(s: GraphState, value: SSAValue) -> SSAValue:
    """Give `value` a second use: a `neg` of it, or the value itself as a candidate output."""
    return s.emit(NegOp, value) if s.flag() else value


def dtype(s: GraphState) -> str:
    return "bf16" if s.integer(0, 4) == 0 else "f32"


def matrix_input(s: GraphState, et) -> SSAValue:
    """A rank >= 2 float value of dtype `et`: from the pool, or a new input."""
    x = s.pick(lambda v: float_min_rank(2)(v) and element_type(v) == et)
    return x if x is not None else s.operand((*s.shape(0, 1), s.integer(1, MAX_DIM), s.integer(1, MAX_DIM)), et)


@exposing
def matmul_bias_act(s: GraphState) -> list[SSAValue]:
    """`act(x @ w + b)`; misses: a rank-2 bias, exp/tanh instead of gelu/silu, a second consumer."""
    x = matrix_input(s, dtype(s))
    et, k, n = element_type(x), shape_of(x)[-1], s.integer(1, MAX_DIM)
    product = s.emit(MatmulOp, x, s.operand((k, n), et, param=True))
    bias = s.operand((n,) if not near_miss(s) else (shape_of(product)[-2], n), et, param=True)
    total = s.emit(AddOp, *((product, bias) if s.flag() else (bias, product)))
    extra = extra_consumer(s, s.choice((product, total))) if near_miss(s) else None
    kind = s.choice((None, GeluOp, SiluOp, SiluOp, ExpOp, TanhOp))
    return [s.emit(kind, total) if kind is not None else total, extra]


@exposing
def residual_norm(s: GraphState) -> list[SSAValue]:
    """`norm(x + r [+ bias])` with a random axis; one in four, the sum also has a consumer before
    the norm or is returned (RLX misses it; the fused op keeps the sum as its second result)."""
    x = s.need(float_min_rank(1))
    shape, et = shape_of(x), element_type(x)
    total = s.emit(AddOp, x, s.operand(shape, et))
    if s.flag():
        total = s.emit(AddOp, total, s.operand(shape[-1:], et, param=True))
    extra = extra_consumer(s, total) if near_miss(s) else None
    axis = s.axis(len(shape))
    norm = s.choice((LayerNormOp, RmsNormOp))
    params = [s.operand(shape[axis:], et, param=True) for _ in range(2)]
    return [s.emit(norm, total, *params, axis=axis), extra]


@exposing
def rms_norm_reshape(s: GraphState) -> list[SSAValue]:
    """`reshape(rms_norm(x), [rows, H])`; misses: a norm over more than the last axis."""
    x = s.pick(lambda v: float_min_rank(3)(v))
    if x is None:
        x = s.operand(s.shape(3, 4))
    shape, et = shape_of(x), element_type(x)
    axis = -1 if not near_miss(s) else -2
    params = [s.operand(shape[axis:], et, param=True) for _ in range(2)]
    norm = s.emit(RmsNormOp, x, *params, axis=axis)
    return [s.emit(ReshapeOp, norm, new_shape=[int(np.prod(shape[:-1])), shape[-1]])]


@exposing
def swiglu_dual(s: GraphState) -> list[SSAValue]:
    """`silu(x @ w_gate) * (x @ w_up)`; misses: gate declared before up, a second consumer."""
    x = matrix_input(s, dtype(s))
    et, k, n = element_type(x), shape_of(x)[-1], s.integer(1, MAX_DIM)
    weights = [s.operand((k, n), et, param=True) for _ in range(2)]
    gate_first = near_miss(s)
    first, second = (s.emit(MatmulOp, x, w) for w in weights)
    gate, up = (first, second) if gate_first else (second, first)
    silu = s.emit(SiluOp, gate)
    extra = extra_consumer(s, s.choice((up, gate, silu))) if near_miss(s) else None
    return [s.emit(MulOp, *((silu, up) if s.flag() else (up, silu))), extra]


@exposing
def shared_input_matmuls(s: GraphState) -> list[SSAValue]:
    """2-3 matmuls of one input (QKV-like, widths differ); misses: a weight of another dtype."""
    x = matrix_input(s, "f32")
    k = shape_of(x)[-1]
    outs = []
    for index in range(s.integer(2, 3)):
        et = "bf16" if index and near_miss(s) else "f32"
        outs.append(s.emit(MatmulOp, x, s.operand((k, s.integer(1, MAX_DIM)), et, param=True)))
    return outs


@exposing
def split_swiglu(s: GraphState) -> list[SSAValue]:
    """`silu(narrow(cat, gate half)) * narrow(cat, up half)`; misses: unequal parts, a middle axis."""
    n = s.integer(1, MAX_DIM)
    cat = s.operand((s.integer(1, MAX_DIM), 2 * n + (1 if near_miss(s) else 0)), dtype(s))
    axis = -1
    if near_miss(s):
        cat, axis = s.emit(ReshapeOp, cat, new_shape=[shape_of(cat)[0], shape_of(cat)[1], 1]), 1
    gate_start = s.choice((0, n))
    gate = s.emit(NarrowOp, cat, axis=axis, start=gate_start, len=n)
    up = s.emit(NarrowOp, cat, axis=axis, start=n - gate_start, len=n)
    return [s.emit(MulOp, up, s.emit(SiluOp, gate))]


@exposing
def elementwise_chain(s: GraphState) -> list[SSAValue]:
    """2-4 elementwise ops on pool values (regions and epilogues); sometimes a compare + where."""
    x = s.need(lambda v: float_min_rank(0)(v))
    for _ in range(s.integer(2, 4)):
        op = s.choice((AddOp, SubOp, MulOp, SigmoidOp, TanhOp, NegOp))
        if op in (AddOp, SubOp, MulOp):
            x = s.emit(op, x, s.partner(shape_of(x), lambda v: element_type(v) == element_type(x)))
        else:
            x = s.emit(op, x)
    if s.flag():
        zero = s.emit(ConstantOp, dense(0.0, element_type(x)))
        x = s.emit(WhereOp, s.emit(CompareOp, x, zero, predicate="gt"), x, zero)
    return [x]


@exposing
def matmul_epilogue(s: GraphState) -> list[SSAValue]:
    """`x @ w` then a chain: bias add, activation, a residual of the product's shape, a scale."""
    x = matrix_input(s, "f32")
    product = s.emit(MatmulOp, x, s.operand((shape_of(x)[-1], s.integer(1, MAX_DIM)), "f32", param=True))
    value = s.emit(AddOp, product, s.operand(shape_of(product)[-1:], "f32", param=True))
    value = s.emit(s.choice((GeluOp, SiluOp, TanhOp)), value)
    if s.flag():
        value = s.emit(AddOp, value, s.operand(shape_of(product), "f32"))
    return [s.emit(MulOp, value, s.emit(ConstantOp, dense(0.5, "f32")))]


@exposing
def attention_block(s: GraphState) -> list[SSAValue]:
    """Projections, head split, rope, (GQA repeat_kv), attention, merge, output projection.

    The q/k/v projections are narrows of one qkv matmul (sometimes with a bias)
    or three matmuls of one input. Misses: an intermediate with a second consumer.
    """
    batch, seq, heads, head_dim = s.integer(1, 2), s.integer(1, 3), s.choice((1, 2)), s.choice((2, 4))
    kv_heads = s.choice((1, heads)) if heads == 2 else 1
    embed = s.integer(1, MAX_DIM)
    hidden = s.operand((batch, seq, embed), "f32")
    widths = [heads * head_dim, kv_heads * head_dim, kv_heads * head_dim]
    if s.flag():
        qkv = s.emit(MatmulOp, hidden, s.operand((embed, sum(widths)), "f32", param=True))
        if s.flag():
            qkv = s.emit(AddOp, qkv, s.operand((sum(widths),), "f32", param=True))
        starts = np.cumsum([0, *widths[:-1]])
        parts = [s.emit(NarrowOp, qkv, axis=-1, start=int(a), len=w) for a, w in zip(starts, widths)]
    else:
        parts = [s.emit(MatmulOp, hidden, s.operand((embed, w), "f32", param=True)) for w in widths]
    q, k, v = (
        s.emit(TransposeOp, s.emit(ReshapeOp, p, new_shape=[batch, seq, n, head_dim]), perm=[0, 2, 1, 3])
        for p, n in zip(parts, (heads, kv_heads, kv_heads))
    )
    if s.flag():
        cos, sin = (s.operand((seq, head_dim // 2), "f32") for _ in range(2))
        q, k = (s.emit(RopeOp, t, cos, sin, head_dim=head_dim, n_rot=head_dim) for t in (q, k))
    if kv_heads != heads:
        k, v = (repeat_kv(s, t, heads) for t in (k, v))
    attended = s.emit(AttentionOp, q, k, v, num_heads=heads, head_dim=head_dim, mask_kind=s.choice(("none", "causal")))
    merged = s.emit(
        ReshapeOp, s.emit(TransposeOp, attended, perm=[0, 2, 1, 3]), new_shape=[batch, seq, heads * head_dim]
    )
    extra = extra_consumer(s, s.choice((attended, merged, q))) if near_miss(s) else None
    out = s.emit(MatmulOp, merged, s.operand((heads * head_dim, s.integer(1, MAX_DIM)), "f32", param=True))
    return [out, extra]


@exposing
def lora(s: GraphState) -> list[SSAValue]:
    """`x @ w + s * ((x @ a) @ b)` in either add and mul order (or without the mul); misses:
    a second consumer of an intermediate, an f32 scale on bf16 (the mul promotes)."""
    x = matrix_input(s, dtype(s))
    et, k, n, r = element_type(x), shape_of(x)[-1], s.integer(1, MAX_DIM), s.integer(1, 2)
    base = s.emit(MatmulOp, x, s.operand((k, n), et, param=True))
    down = s.emit(MatmulOp, x, s.operand((k, r), et, param=True))
    adapter = s.emit(MatmulOp, down, s.operand((r, n), et, param=True))
    if s.flag():
        scale_type = "f32" if near_miss(s) else et
        scale = s.emit(ConstantOp, dense(np.array(s.choice((0.5, 2.0, 0.125))), scale_type))
        adapter = s.emit(MulOp, *((adapter, scale) if s.flag() else (scale, adapter)))
    total = s.emit(AddOp, *((base, adapter) if s.flag() else (adapter, base)))
    extra = extra_consumer(s, s.choice((base, down, adapter))) if near_miss(s) else None
    return [total, extra]


@exposing
def upsample_chain(s: GraphState) -> list[SSAValue]:
    """`resize_nearest_2x(x)` feeding a unary activation, a binary op and a tanh, or 1-2 more
    resizes (region prologues and transform regions); misses: the resize has a second consumer."""
    x = s.pick(lambda v: float_min_rank(4)(v) and rank(v) == 4)
    up = s.emit(ResizeNearest2xOp, x if x is not None else s.operand(s.shape(4, 4), dtype(s)))
    extra = extra_consumer(s, up) if near_miss(s) else None
    kind = s.choice(("unary", "binary", "resize"))
    if kind == "unary":
        out = s.emit(s.choice((ReluOp, TanhOp, SigmoidOp)), up)
    elif kind == "binary":
        other = s.operand(shape_of(up), element_type(up))
        out = s.emit(TanhOp, s.emit(s.choice((AddOp, MulOp)), *((up, other) if s.flag() else (other, up))))
    else:
        out = up
        for _ in range(s.integer(1, 2)):
            out = s.emit(ResizeNearest2xOp, out)
    return [out, extra]


@exposing
def batch_slices(s: GraphState) -> list[SSAValue]:
    """`concat(axis 0)` of 2-4 equal `narrow(x, axis 0)` slices, each through the same unary op,
    sometimes after the same binary op with one shared operand (batch pre-processing), the
    concat sometimes in reverse order; misses: one slice's op differs, a slice's result has a
    second consumer."""
    count, width = s.integer(2, 4), s.integer(1, 2)
    x = s.operand((count * width, *s.shape(0, 3)), dtype(s))
    shared = s.partner((width, *shape_of(x)[1:]), lambda v: element_type(v) == element_type(x)) if s.flag() else None
    binary, unary = s.choice((AddOp, SubOp, MulOp)), s.choice((ReluOp, TanhOp, SigmoidOp, NegOp))
    odd = s.integer(0, count - 1) if near_miss(s) else None
    outs = []
    for i in range(count):
        value = s.emit(NarrowOp, x, axis=0, start=i * width, len=width)
        if shared is not None:
            value = s.emit(binary, value, shared)
        outs.append(s.emit(unary if i != odd else ExpOp, value))
    extra = extra_consumer(s, s.choice(outs)) if near_miss(s) else None
    return [s.emit(ConcatOp, *(outs if s.flag() else outs[::-1]), axis=0), extra]


def repeat_kv(s: GraphState, kv: SSAValue, heads: int) -> SSAValue:
    """GQA's `repeat_kv`: each kv head repeated `heads / kv_heads` times along the head axis."""
    kv_heads = shape_of(kv)[1]
    singles = [s.emit(NarrowOp, kv, axis=1, start=j, len=1) for j in range(kv_heads)]
    return s.emit(ConcatOp, *(h for h in singles for _ in range(heads // kv_heads)), axis=1)


PATTERNS: tuple[PatternRecipe, ...] = (
    matmul_bias_act,
    residual_norm,
    rms_norm_reshape,
    swiglu_dual,
    shared_input_matmuls,
    split_swiglu,
    elementwise_chain,
    matmul_epilogue,
    attention_block,
    lora,
    upsample_chain,
    batch_slices,
)
"""Every pattern recipe, one per fusion (and near misses of it)."""
