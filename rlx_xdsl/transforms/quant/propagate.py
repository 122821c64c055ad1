"""`rlx-quant-propagate`: RLX's `quant_propagate`, applied only where it is exact.

RLX drops a `FakeQuantize` whose input reaches an identical upstream one through
"magnitude-preserving" ops and rewires its consumers to the *upstream* fake-quantize,
skipping the ops between (`fq(relu(fq(x)))` becomes `fq(x)`, losing the relu). Here the
downstream op is dropped and its consumers read its own input (`relu(fq(x))`), and only
where that input provably equals the downstream op's output:

* both fake-quantise with `scale_mode = fixed` from the same `state` value, the same
  `bits` and `axis`: the same grid `s * k`, k in [qmin, qmax];
* the ops between keep every value on that grid: each output element is an input
  element or 0 (`GRID_PRESERVING`: relu, reshape, transpose, narrow, max pooling);
  per channel, only elementwise ones (channels stay in place);
* the downstream `ste` is `identity` or `clipped_identity`, whose gradient on grid
  values is 1, so gradients do not change either.

A grid value `v = s * k` fake-quantises to itself: `round(v * (1/s)) = k` (the rounding
errors are far below 1/2 for |k| <= 128), so the dropped op computed `v`. A `per_batch`
or `ema` range depends on the downstream op's own input (`max|fq(x)|` may differ from
`max|x|` by an ulp), so those are never dropped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.conv import PoolOp
from rlx_xdsl.dialects.mir.elementwise import ReluOp
from rlx_xdsl.dialects.mir.quant import FakeQuantizeOp, ScaleMode, SteKind
from rlx_xdsl.dialects.mir.shape import NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


class Moves(Enum):
    """How an op keeps values on a fake-quantisation grid."""

    IN_PLACE = "in-place"
    """Each output element is its own input element or 0 (relu): channels stay put."""
    REARRANGES = "rearranges"
    """Each output element is some input element (reshape, transpose, narrow, max pool)."""


GridFact = Callable[[Operation], Moves | None]
"""For an op instance: how it keeps values on the grid, or None when it does not."""

GRID_PRESERVING: OpRegistry[GridFact] = OpRegistry("fake-quantisation grid fact")
"""The single-input ops whose outputs stay on their input's quantisation grid."""

GRID_PRESERVING.add(ReluOp, lambda op: Moves.IN_PLACE)
for _op_class in (ReshapeOp, TransposeOp, NarrowOp):
    GRID_PRESERVING.add(_op_class, lambda op: Moves.REARRANGES)
GRID_PRESERVING.add(PoolOp, lambda op: Moves.REARRANGES if op.kind.data == ReduceKind.MAX else None)

TRANSPARENT_STES = (SteKind.IDENTITY, SteKind.CLIPPED_IDENTITY)
"""Downstream STE kinds whose gradient is 1 on grid values."""


def _grid(op: FakeQuantizeOp) -> tuple:
    """What fixes a fixed-range fake-quantize's grid: bits, axis and the state value."""
    axis = None if op.axis is None else op.axis.value.data
    return op.bits.value.data, axis, op.state


def upstream_fake_quantize(value: SSAValue, per_channel: bool) -> FakeQuantizeOp | None:
    """The fake-quantize `value` comes from through grid-preserving ops, if any."""
    while isinstance(owner := value.owner, Operation):
        if isinstance(owner, FakeQuantizeOp):
            return owner
        fact = GRID_PRESERVING.lookup(owner)
        moves = fact(owner) if fact is not None else None
        if moves is None or (per_channel and moves is not Moves.IN_PLACE):
            return None
        value = owner.operands[0]
    return None


@dataclass
class DropExactFakeQuantize(RewritePattern):
    """`fq(g(fq(x)))` with a fixed, shared grid and grid-preserving `g` becomes `g(fq(x))`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: FakeQuantizeOp, rewriter: PatternRewriter) -> None:
        if op.mode() is not ScaleMode.FIXED or op.ste.data not in TRANSPARENT_STES:
            return
        upstream = upstream_fake_quantize(op.x, per_channel=op.axis is not None)
        if upstream is None or upstream.mode() is not ScaleMode.FIXED or _grid(upstream) != _grid(op):
            return
        Emitter.replacing(op, rewriter).replace(op, op.x)


@dataclass(frozen=True)
class QuantPropagatePass(ModulePass):
    """Drop fake-quantisations that provably change nothing (RLX's quant_propagate, exact)."""

    name = "rlx-quant-propagate"

    STATISTICS = (pattern_statistic(DropExactFakeQuantize),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, DropExactFakeQuantize(), recursive=True)
