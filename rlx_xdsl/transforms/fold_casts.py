"""`rlx-fold-casts`: remove casts that change nothing, without changing any value.

Three rewrites of plain `mir.cast`s (a cast with a `config` rescales blocks of
its input and is never touched):

* an identity cast (to its operand's own type) is its operand;
* a chain `cast(cast(x: A -> B) -> C)` whose first step is exact (B holds every
  value of A, `dtypes.converts_exactly`) starts from `x` instead: back to A it
  is `x` itself (widen, then narrow back), and to a float C it is `cast(x -> C)`,
  which rounds the same value. A chain whose first step rounds (narrow, then
  widen) is kept: it is how a program rounds on purpose. Integer targets are
  not shortened: a float's NaN or infinity becomes an unspecified integer,
  which may depend on the path;
* two casts of one value to one type are one cast, placed right after the
  value's definition so that it dominates every use of both.

A cast whose declared shape says more or less than its operand's
(`tensor<3xf16> -> tensor<?xf32>`) is part of the program's types: it is never
shortened, never the start a chain is shortened to, and never merged with a
cast of another declared type, so every value keeps the type it was declared
with (a `func.return` compares types exactly).

The same rules serve `rlx-amp`, which must not leave work for this pass:
`CastCache` hands out "this value, as that element type" through them, reusing
an existing cast when there is one.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import LocationAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.elementwise import CastOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of, tensor
from rlx_xdsl.transforms.canonicalize import IdentityCast
from rlx_xdsl.transforms.pipeline import ReportsChanges
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

# What a value is --------------------------------------------------------------------


def element_type(value: SSAValue) -> Attribute:
    t = value.type
    assert isinstance(t, TensorType), f"casts convert tensors, not {t}"
    return t.element_type


def cast_type(value: SSAValue, to: Attribute) -> TensorType:
    """The type of `value` cast to element type `to`: its declared shape, over `to`."""
    return tensor(to, shape_of(value.type))


def plain_cast_of(value: SSAValue) -> CastOp | None:
    """The plain `mir.cast` defining `value`, if one does."""
    owner = value.owner
    return owner if isinstance(owner, CastOp) and owner.is_plain else None


def keeps_declared_shape(cast: CastOp) -> bool:
    """The cast's result declares its operand's shape (it changes the element type only)."""
    return shape_of(cast.result.type) == shape_of(cast.input.type)


def shortest_source(value: SSAValue, to: Attribute) -> SSAValue:
    """The value to convert to `to` that gives `cast(value -> to)` through the fewest casts.

    Walks back through plain casts that converted exactly and kept the declared
    shape: converting their input instead gives the same values (see the module
    docstring) of the same declared type. The result is `value` itself when no
    such cast defines it; it always has `value`'s declared shape.
    """
    inner = plain_cast_of(value)
    while inner is not None and keeps_declared_shape(inner):
        source = element_type(inner.input)
        if not dtypes.converts_exactly(source, element_type(value)):
            break
        if source != to and not dtypes.is_float(to):
            break
        value = inner.input
        inner = plain_cast_of(value)
    return value


def existing_cast(value: SSAValue, to: Attribute, besides: Operation | None = None) -> CastOp | None:
    """A plain cast of `value` to the type `to` (shape included) already in the IR (other than `besides`)."""
    for use in value.uses:
        user = use.operation
        if (
            user is not besides
            and isinstance(user, CastOp)
            and user.is_plain
            and user.result.type == to
        ):
            return user
    return None


# Where a cast of a value goes ---------------------------------------------------------


def _defined_at(value: SSAValue) -> Operation | Block:
    """The op defining `value`, or the block whose argument it is."""
    return value.block if isinstance(value, BlockArgument) else value.owner  # type: ignore[return-value]


def after_definition(value: SSAValue) -> InsertPoint:
    """Right after `value`'s definition, after the casts of the same definition already there.

    Every use of `value` comes after its definition, so a cast placed here
    dominates them all; skipping the casts already placed keeps several casts
    of one definition in the order they were made.
    """
    definition = _defined_at(value)
    if isinstance(definition, Block):
        block, following = definition, definition.first_op
    else:
        block, following = definition.parent_block(), definition.next_op
    assert block is not None, "values used by casts are defined in a block"
    while (
        isinstance(following, CastOp)
        and following.is_plain
        and _defined_at(following.input) is definition
    ):
        following = following.next_op
    return InsertPoint(block, following)


def _location_of(value: SSAValue) -> LocationAttr | None:
    """Where `value` is defined: its op's location, or that of the op owning its block."""
    definition = _defined_at(value)
    owner = definition.parent_op() if isinstance(definition, Block) else definition
    return owner.location if owner is not None else None


def new_cast(value: SSAValue, to: Attribute) -> CastOp:
    """A plain cast of `value` to `to`, named after `value` (`%x` gives `%x_f16`)."""
    cast = CastOp(value, to)
    hint = value.name_hint
    if hint is not None:
        cast.result.name_hint = f"{hint}_{dtypes.dtype_of(to).name}"
    return cast


def move_after_definition(cast: CastOp, rewriter: PatternRewriter) -> None:
    """Move `cast` right after its operand's definition (it then dominates all its operand's uses)."""
    cast.detach()
    rewriter.insert(cast, after_definition(cast.input))


class CastCache:
    """`value` as element type `to`, one cast per (value, type): what `rlx-amp` inserts casts with.

    `cast(value, to)` returns `value` when it has that type already, the start
    of an exact chain that has it (`shortest_source`), or else a plain cast of
    it: the one made or found before, an existing one (moved right after the
    definition so it dominates the new use), or a new one placed there. So the
    casts it hands out leave nothing for `rlx-fold-casts` to fold.
    """

    def __init__(self) -> None:
        self._casts: dict[tuple[SSAValue, Attribute], SSAValue] = {}
        self._last_placed: dict[Operation | Block, CastOp] = {}
        """The last cast placed after each definition: the next one goes after it (in O(1))."""
        self.created = 0
        """How many casts this cache inserted (reused ones are not counted)."""

    def cast(self, value: SSAValue, to: Attribute, rewriter: PatternRewriter) -> SSAValue:
        """`value` as element type `to`, of type `cast_type(value, to)`."""
        value = shortest_source(value, to)
        if element_type(value) == to:
            return value
        key = (value, to)
        cached = self._casts.get(key)
        if cached is not None:
            return cached
        cast = existing_cast(value, cast_type(value, to))
        if cast is not None:
            cast.detach()
        else:
            cast = new_cast(value, to)
            self.created += 1
        Emitter.at(self._next_to_definition(value), _location_of(value), rewriter).insert(cast)
        self._last_placed[_defined_at(value)] = cast
        self._casts[key] = cast.result
        return cast.result

    def _next_to_definition(self, value: SSAValue) -> InsertPoint:
        last = self._last_placed.get(_defined_at(value))
        if last is not None and last.parent is not None:
            return InsertPoint.after(last)
        return after_definition(value)


# The patterns ----------------------------------------------------------------------


class CastOfExactCast(RewritePattern):
    """`cast(cast(x: A -> B) -> C)` with an exact first step is `x` (C = A) or `cast(x -> C)` (C float)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if not (op.is_plain and keeps_declared_shape(op)):
            return
        inner = plain_cast_of(op.input)
        to = element_type(op.result)
        source = shortest_source(op.input, to)
        if inner is None or source is op.input:
            return
        if element_type(source) == to:
            rewriter.replace(op, (), [source])
        else:
            e = Emitter.replacing(op, rewriter)
            e.replace(op, e.emit(CastOp(source, to)))
        erase_unused_chain(inner, rewriter)


def erase_unused_chain(cast: CastOp | None, rewriter: PatternRewriter) -> None:
    """Erase `cast` if nothing uses it any more, then the casts feeding it that this leaves unused."""
    while cast is not None and not cast.result.uses:
        feeding = plain_cast_of(cast.input)
        rewriter.erase(cast)
        cast = feeding


class DuplicateCast(RewritePattern):
    """Two plain casts of one value to one type: keep this one, right after the value's definition."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CastOp, rewriter: PatternRewriter) -> None:
        if not op.is_plain:
            return
        other = existing_cast(op.input, op.result.type, besides=op)
        if other is None:
            return
        move_after_definition(op, rewriter)
        rewriter.replace(other, (), [op.result])


PATTERNS: tuple[RewritePattern, ...] = (IdentityCast(), CastOfExactCast(), DuplicateCast())
"""Each removes a cast (or shortens a chain), so the greedy walk ends."""


def fold_casts(module: ModuleOp) -> bool:
    """Apply `PATTERNS` until nothing changes; True if anything did. Other dead ops are kept."""
    return apply_patterns(module, *PATTERNS, recursive=True)


@dataclass(frozen=True)
class FoldCastsPass(ReportsChanges, ModulePass):
    """Remove identity casts, shorten exact cast chains and merge duplicate casts.

    Only plain casts are touched, and only where the values stay exactly the
    same: `cast(cast(x: f16 -> f32) -> f16)` is `x`, but `cast(cast(x: f32 ->
    f16) -> f32)` rounds `x` and stays. Merged casts sit right after their
    operand's definition.
    """

    name = "rlx-fold-casts"
    STATISTICS = tuple(pattern_statistic(type(p)) for p in PATTERNS)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        return fold_casts(op)
