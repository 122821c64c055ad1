"""`rlx-canonicalize`: drop ops that compute nothing and merge stacked shape ops.

This module is the template for pattern-based passes: one small `RewritePattern`
per rewrite, rooted at the op it replaces; new ops built by the op's own
constructor (types are inferred, never computed here) and inserted through an
`Emitter` so they keep the replaced op's location; one greedy walker over the
module.

When may a value stand in for an op's result? Only when it has exactly the
result's type: broadcasting (`x + zeros(2x3)` for `x: 3`) or dtype promotion
(`x: i32` plus an f32 zero) mean the op does real work. With `?` dims equal
types are not enough, since `?` may be 1 at run time and broadcast to more:
every other broadcast operand must then be 1 or the same static size along
each of the forwarded value's dims (`forwards_unchanged`).

"Zero" and "one" are `mir.constant`s whose every element equals 0 or 1, in any
dtype, splat or not: `dense<[0.0, 0.0]>` is the same value as `dense<0.0>`,
and checking elements costs one numpy comparison.

Every rewrite is exact under IEEE 754, signed zeros, NaN and infinities
included (no fast-math `nsz`): a float zero folds only with the sign that makes
it an identity. `x + -0.0` is `x`, but `x + 0.0` is not (`-0.0 + 0.0 = +0.0`,
so `1 / (x + 0.0)` is `+inf` at `x = -0.0`); `x - 0.0` is `x`, but `x - -0.0`
is not. `x * 1` is `x` for real dtypes, not for complex ones (`(inf+0j) *
(1+0j)` has a NaN imaginary part). Integers fold either zero. Nothing folds
`x * 0`, `x - x` or `0 - x` (wrong for NaN, infinities or a signed zero).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.mir.attention import AttentionOp
from rlx_xdsl.dialects.mir.elementwise import (
    AddOp,
    CastOp,
    ConstantOp,
    MulOp,
    NegOp,
    SubOp,
    WhereOp,
)
from rlx_xdsl.dialects.mir.shape import ConcatOp, ExpandOp, ReshapeOp, TransposeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, is_static, shape_of
from rlx_xdsl.transforms.pipeline import ReportsChanges
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

if TYPE_CHECKING:
    import numpy as np

# What the patterns ask of values ----------------------------------------------------


def constant_elements(value: SSAValue) -> np.ndarray | None:
    """`value`'s elements when a `mir.constant` defines it, else None (numpy is loaded
    only for graphs with constants: a start-up cost every `rlx-opt` run would pay)."""
    owner = value.owner
    if not isinstance(owner, ConstantOp):
        return None
    from rlx_xdsl.ir.dense import dense_to_numpy

    return dense_to_numpy(owner.value)


def is_filled_with_one(value: SSAValue) -> bool:
    """`value` is a real (not complex) `mir.constant` whose every element is 1."""
    elements = constant_elements(value)
    return elements is not None and elements.dtype.kind != "c" and bool((elements == 1).all())


def is_filled_with_zero(value: SSAValue, negative: bool) -> bool:
    """`value` is a `mir.constant` of zeros; float and complex zeros (every part of
    them) must also have the sign bit `negative`. Integers and booleans have one zero."""
    elements = constant_elements(value)
    if elements is None or not (elements == 0).all():
        return False
    if elements.dtype.kind in "biu":
        return True
    import numpy as np

    # bf16 and fp8 (numpy kind "V") have no signbit of their own; f32 holds their zeros.
    parts = (elements.real, elements.imag) if elements.dtype.kind == "c" else (elements.astype(np.float32),)
    return all(bool((np.signbit(part) == negative).all()) for part in parts)


def broadcast_keeps_shape(value: SSAValue, others: Sequence[SSAValue]) -> bool:
    """Broadcasting `value` with `others` yields `value`'s own shape, whatever its `?` dims are.

    Aligned from the right, each dim of another operand must be 1 or the same
    static size; a `?` on either side could be 1 against a larger size.
    """
    shape = shape_of(value.type)
    for other in others:
        other_shape = shape_of(other.type)
        if len(other_shape) > len(shape):
            return False
        aligned = shape[len(shape) - len(other_shape) :]
        if not all(o == 1 or o == d != DYNAMIC for d, o in zip(aligned, other_shape)):
            return False
    return True


def forwards_unchanged(result: SSAValue, value: SSAValue, broadcast_with: Sequence[SSAValue] = ()) -> bool:
    """`value` can replace `result`: exactly its type, and not grown by broadcasting at run time."""
    return value.type == result.type and broadcast_keeps_shape(value, broadcast_with)


# How the patterns rewrite -------------------------------------------------------------


def forward(op: Operation, value: SSAValue, rewriter: PatternRewriter) -> None:
    """Replace `op`'s only result by the existing `value`, and erase `op`."""
    rewriter.replace(op, (), [value])


def replace_by_new_op(op: Operation, new_op: Operation, rewriter: PatternRewriter) -> bool:
    """Emit `new_op` in place of `op` (at `op`'s location) if it infers exactly `op`'s type.

    The candidate is built before it is inserted because its type is known only
    then. A rejected candidate is erased: it already holds uses of its operands,
    which would otherwise keep them alive. Nothing touches the rewriter unless the
    rewrite happens, so a rejection does not make the walker run again.
    """
    if new_op.results[0].type != op.results[0].type:
        new_op.erase()
        return False
    emitter = Emitter.replacing(op, rewriter)
    emitter.replace(op, emitter.emit(new_op))
    return True


def forward_beside_neutral(
    op: Operation, kept: SSAValue, other: SSAValue, is_neutral: Callable[[SSAValue], bool], rewriter: PatternRewriter
) -> bool:
    """Forward `kept` when `other` is a constant that `is_neutral` finds leaves it unchanged."""
    if forwards_unchanged(op.results[0], kept, [other]) and is_neutral(other):
        forward(op, kept, rewriter)
        return True
    return False


# Arithmetic identities ----------------------------------------------------------------


def is_negative_zero(value: SSAValue) -> bool:
    return is_filled_with_zero(value, negative=True)


def is_positive_zero(value: SSAValue) -> bool:
    return is_filled_with_zero(value, negative=False)


class AddOfZero(RewritePattern):
    """`x + -0.0` and `-0.0 + x` are `x`; an integer zero either way. `x + 0.0` stays:
    at `x = -0.0` it is `+0.0` (IEEE 754)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AddOp, rewriter: PatternRewriter) -> None:
        if not forward_beside_neutral(op, op.lhs, op.rhs, is_negative_zero, rewriter):
            forward_beside_neutral(op, op.rhs, op.lhs, is_negative_zero, rewriter)


class SubOfZero(RewritePattern):
    """`x - 0.0` is `x`; an integer zero too. `x - -0.0` stays (it is `x + 0.0`), and
    `0 - x` is a negation, not an identity (`0.0 - 0.0` is `+0.0`, `-(0.0)` is `-0.0`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SubOp, rewriter: PatternRewriter) -> None:
        forward_beside_neutral(op, op.lhs, op.rhs, is_positive_zero, rewriter)


class MulByOne(RewritePattern):
    """`x * 1` and `1 * x` are `x`, exactly (NaN, infinities and -0.0 included), for
    real dtypes; a complex product by `1+0j` turns an infinite part's partner into NaN."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MulOp, rewriter: PatternRewriter) -> None:
        if not forward_beside_neutral(op, op.lhs, op.rhs, is_filled_with_one, rewriter):
            forward_beside_neutral(op, op.rhs, op.lhs, is_filled_with_one, rewriter)


class NegOfNeg(RewritePattern):
    """`-(-x)` is `x`; also for integers, whose negation wraps around both times."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: NegOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, NegOp) and forwards_unchanged(op.result, inner.input):
            forward(op, inner.input, rewriter)


# Shape ops --------------------------------------------------------------------------


class ReshapeOfReshape(RewritePattern):
    """`reshape(reshape(x, s1), s2)` is `reshape(x, s2)`: reshapes keep row-major order.

    The inner reshape stays while something else uses it. With `?` dims the
    merged reshape may infer a less static type than the outer one declared
    (`x: ?x4` reshaped to 8, then to -1x2); it is then left alone.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if isinstance(inner, ReshapeOp):
            like_dims = op.like_dims.get_values() if op.like_dims is not None else None
            merged = ReshapeOp(inner.input, new_shape=op.new_shape.get_values(), like=op.like, like_dims=like_dims)
            replace_by_new_op(op, merged, rewriter)


class IdentityReshape(RewritePattern):
    """A reshape of a static tensor to its own type is its input.

    With `?` dims equal types prove nothing: a declared `tensor<?x4xf32>` result
    is compatible with an inferred `2x?` one.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ReshapeOp, rewriter: PatternRewriter) -> None:
        if is_static(shape_of(op.input.type)) and forwards_unchanged(op.result, op.input):
            forward(op, op.input, rewriter)


class TransposeOfTranspose(RewritePattern):
    """`transpose(transpose(x, p), q)` is `transpose(x, [p[i] for i in q])`; `x` if that is the identity.

    The inner transpose stays while something else uses it.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        inner = op.input.owner
        if not isinstance(inner, TransposeOp):
            return
        inner_perm = inner.perm.get_values()
        composed = [inner_perm[axis] for axis in op.perm.get_values()]
        if composed != list(range(len(composed))):
            replace_by_new_op(op, TransposeOp(inner.input, perm=composed), rewriter)
        elif forwards_unchanged(op.result, inner.input):
            forward(op, inner.input, rewriter)


class IdentityTranspose(RewritePattern):
    """A transpose with the permutation `[0, 1, ..., n-1]` is its input."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: TransposeOp, rewriter: PatternRewriter) -> None:
        perm = op.perm.get_values()
        if list(perm) == list(range(len(perm))) and forwards_unchanged(op.result, op.input):
            forward(op, op.input, rewriter)


class IdentityCast(RewritePattern):
    """A plain cast to the input's own type is its input (a cast never changes the shape).

    A blocked-scaling cast (with a `config`) rescales its input, so it stays.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if op.is_noop() and forwards_unchanged(op.result, op.input):
            forward(op, op.input, rewriter)


class IdentityExpand(RewritePattern):
    """An expand whose every target dim is -1 or the input's own static dim is its input.

    Equal types alone are not enough with `?` dims: `expand(x: ?x4, [3, 4])`
    may declare `?x4` but turns a 1x4 input into 3x4.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ExpandOp, rewriter: PatternRewriter) -> None:
        target = op.target_shape.get_values()
        shape = shape_of(op.input.type)
        keeps_every_dim = (
            op.like is None and len(target) == len(shape) and all(t in (-1, d) for t, d in zip(target, shape))
        )
        if keeps_every_dim and forwards_unchanged(op.result, op.input):
            forward(op, op.input, rewriter)


class WhereOfConstantCondition(RewritePattern):
    """`where(c, a, b)` is `a` when the constant `c` is true everywhere, `b` when false everywhere.

    Truth is the kernel's (`astype(bool)`: nonzero, NaN included); a mixed
    condition selects per element and stays. The chosen branch must not be
    broadcast against the condition or the other branch.
    """

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: WhereOp, rewriter: PatternRewriter) -> None:
        elements = constant_elements(op.cond)
        if elements is None:
            return
        truth = elements.astype(bool)
        if truth.all():
            chosen, other = op.on_true, op.on_false
        elif not truth.any():
            chosen, other = op.on_false, op.on_true
        else:
            return
        if forwards_unchanged(op.result, chosen, [op.cond, other]):
            forward(op, chosen, rewriter)


class ConcatOfOne(RewritePattern):
    """A concat of a single operand is that operand."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConcatOp, rewriter: PatternRewriter) -> None:
        if len(op.inputs) == 1 and forwards_unchanged(op.result, op.inputs[0]):
            forward(op, op.inputs[0], rewriter)


class AttentionOfRepeatedKv(RewritePattern):
    """`attention(q, repeat_kv(k), repeat_kv(v))` is `attention(q, k, v)`: the op reads its
    grouped KV heads itself (query head h reads KV head h // (H / Hkv)), so the repeated
    copies (a concat of single-head narrows, RLX's `repeat_kv`) need not be built."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AttentionOp, rewriter: PatternRewriter) -> None:
        from rlx_xdsl.transforms.fusion.attention_block import see_through_repeat_kv

        heads = op.num_heads.value.data
        seen = [see_through_repeat_kv(value, heads, []) for value in (op.k, op.v)]
        if None in seen or seen[0][1] != seen[1][1]:
            return
        (k, _), (v, _) = seen
        if k is op.k or v is op.v:  # not both repeated
            return
        replace_by_new_op(op, op.clone(value_mapper={op.k: k, op.v: v}), rewriter)


PATTERNS: tuple[RewritePattern, ...] = (
    AddOfZero(),
    SubOfZero(),
    MulByOne(),
    NegOfNeg(),
    ReshapeOfReshape(),
    IdentityReshape(),
    TransposeOfTranspose(),
    IdentityTranspose(),
    IdentityCast(),
    IdentityExpand(),
    WhereOfConstantCondition(),
    ConcatOfOne(),
    AttentionOfRepeatedKv(),
)
"""Every pattern of the pass. Each one removes an op or replaces a stacked pair by a
single op, and none builds what another takes apart, so the greedy walk converges."""


def canonicalize(module: ModuleOp) -> bool:
    """Apply `PATTERNS` (and drop dead ops) until nothing changes; True if anything did."""
    return apply_patterns(module, *PATTERNS, recursive=True, erase_dead=True)


@dataclass(frozen=True)
class CanonicalizePass(ReportsChanges, ModulePass):
    """Fold ops that compute nothing and merge stacked reshapes and transposes.

    Folds x+(-0.0), x-0.0, x*1 (exact under IEEE 754, signed zeros included;
    integers fold any zero), -(-x), identity reshape/transpose/cast/expand,
    `where` with a constant condition and one-operand concat, attention of
    repeated (GQA `repeat_kv`) keys and values to grouped attention, applying
    `PATTERNS` to a fixpoint over every function and region body.

    Like MLIR's canonicalize it also erases ops nobody uses (the one pass
    besides `rlx-dce` that does: `apply_patterns(erase_dead=True)`), on
    purpose: the constants a fold leaves behind must go anyway, and a separate
    `rlx-dce` run would cost another walk. The walk uses xDSL's "trivially
    dead" rule, which trusts an op's declared effects, where `rlx-dce` also
    looks inside region ops that claim to be pure.
    """

    name = "rlx-canonicalize"
    STATISTICS = tuple(pattern_statistic(type(p)) for p in PATTERNS)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        return canonicalize(op)
