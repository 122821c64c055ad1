"""Elementwise regions: mark them, unfuse them, clip the ones over a target's caps.

* `rlx-mark-elementwise-regions{max-steps max-inputs}` (RLX's `MarkElementwiseRegions`):
  each maximal chain of elementwise ops (the `Elementwise` trait) whose
  intermediate values have one consumer becomes one `mir.elementwise_region`.
  A chain grows from its tail (an elementwise op that no elementwise op
  consumes alone) back through producers used only inside it, as long as the
  region stays within `max-steps` ops and `max-inputs` inputs (0: no cap); it
  needs at least two ops. Producers left out by a cap start chains of their own.
* `rlx-unfuse-elementwise-regions` (RLX's `UnfuseElementwiseRegions`): every
  region back to its ops. The body is real IR, so a compare step stays `i1`.
* `rlx-clip-elementwise-regions{max-steps max-inputs}` (RLX's `clip_elementwise_regions`):
  unfuses only the regions over the caps; unlike RLX, compare steps stay `i1`
  (RLX re-types them `u8`).

Unlike RLX, any elementwise op may be a step (RLX: only same-dtype casts),
shapes may be dynamic, and inputs may come from matmuls: the body's NumPy
broadcasting is exact, so no input layout needs excluding.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.traits import ConstantLike

from rlx_xdsl.dialects.mir.fused_regions import (
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
)
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.fusion.matching import (
    apply_patterns,
    in_block_order,
    is_fusable_step,
    sole_user,
)
from rlx_xdsl.transforms.statistics import pattern_statistic

KERNEL_BODIES = (ElementwiseRegionOp, FusedMatmulEpilogueOp)
"""Ops whose body is already one fused kernel: nothing inside them is marked again."""


@dataclass(frozen=True)
class Caps:
    """RLX's `FusionLimits`: the most ops and inputs one region may have (0: unbounded)."""

    max_steps: int = 0
    max_inputs: int = 0

    def allow(self, steps: int, inputs: int) -> bool:
        return (not self.max_steps or steps <= self.max_steps) and (not self.max_inputs or inputs <= self.max_inputs)


def is_step(op: Operation) -> bool:
    """An elementwise op outside fused kernels' bodies (constants stay region inputs)."""
    parent = op.parent_op()
    return is_fusable_step(op) and not op.has_trait(ConstantLike) and not isinstance(parent, KERNEL_BODIES)


def absorbed_by_consumer(op: Operation) -> bool:
    """`op`'s result has one consumer, an elementwise step of the same block, whose chain takes it."""
    user = sole_user(op.results[0])
    return user is not None and user.parent is op.parent and is_step(user)


def inputs_of(members: list[Operation]) -> list[SSAValue]:
    """The values the members read that no member computes, de-duplicated, in first-use order."""
    computed = {op.results[0] for op in members}
    seen: dict[SSAValue, None] = {}
    for op in members:
        for value in op.operands:
            if value not in computed:
                seen.setdefault(value)
    return list(seen)


def grow_chain(tail: Operation, caps: Caps) -> list[Operation]:
    """The tail and the producers it absorbs, breadth-first, within the caps (in block order)."""
    members = {tail}
    frontier = [tail]
    while frontier:
        op = frontier.pop(0)
        for value in op.operands:
            producer = value.owner
            if (
                not isinstance(producer, Operation)
                or producer in members
                or not is_step(producer)
                or producer.parent is not tail.parent
                or sole_user(value) is not op
            ):
                continue
            trial = in_block_order(members | {producer}, tail)
            if caps.allow(len(trial), len(inputs_of(trial))):
                members.add(producer)
                frontier.append(producer)
    return in_block_order(members, tail)


def build_region(members: list[Operation], e: Emitter) -> ElementwiseRegionOp:
    """An `elementwise_region` whose body computes `members` on block arguments for their inputs."""
    inputs = inputs_of(members)
    block = Block(arg_types=[v.type for v in inputs])
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, block.args))
    for arg, value in zip(block.args, inputs):
        arg.name_hint = value.name_hint
    for op in members:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(YieldOp(mapping[members[-1].results[0]]))
    return ElementwiseRegionOp(inputs, Region(block))


class MarkElementwiseRegion(RewritePattern):
    """A chain tail and the producers it absorbs become one `mir.elementwise_region`."""

    def __init__(self, caps: Caps):
        self.caps = caps

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_step(op) or absorbed_by_consumer(op):
            return
        members = grow_chain(op, self.caps)
        if len(members) < 2:
            return
        e = Emitter.replacing(op, rewriter).fused(members)
        region = e.emit(build_region(members, e))
        e.replace(op, region)
        for dead in reversed(members[:-1]):
            rewriter.erase(dead)


class UnfuseRegion(RewritePattern):
    """A region (over the caps, if any) becomes its body's ops again."""

    def __init__(self, caps: Caps = Caps()):
        self.caps = caps

    @op_type_rewrite_pattern
    def match_and_rewrite(self, region: ElementwiseRegionOp, rewriter: PatternRewriter) -> None:
        if self.caps.allow(region.steps, len(region.inputs)):
            return
        from rlx_xdsl.transforms.unfuse_rules.fused_regions import unfuse_elementwise_region

        e = Emitter.replacing(region, rewriter)
        e.replace(region, *unfuse_elementwise_region(e, region))


FOREVER = Caps(max_steps=-1)
"""Caps no region satisfies: unfuse every region."""


@dataclass(frozen=True)
class MarkElementwiseRegionsPass(ModulePass):
    """Fuse maximal single-consumer chains of elementwise ops into mir.elementwise_region
    (RLX's MarkElementwiseRegions).

    At least two ops per region; max-steps / max-inputs cap a region's ops
    and inputs (0: unbounded; RLX's GPU and TPU targets use 32 and 16).
    """

    name = "rlx-mark-elementwise-regions"
    STATISTICS = (pattern_statistic(MarkElementwiseRegion),)

    max_steps: int = 32
    max_inputs: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        # Walking backwards visits consumers first, so each chain is grown from its tail;
        # a producer a cap left out is a tail of its own on the next sweep.
        apply_patterns(op, MarkElementwiseRegion(Caps(self.max_steps, self.max_inputs)), recursive=True, reverse=True)


@dataclass(frozen=True)
class UnfuseElementwiseRegionsPass(ModulePass):
    """Expand every mir.elementwise_region back into its ops (RLX's UnfuseElementwiseRegions)."""

    name = "rlx-unfuse-elementwise-regions"
    STATISTICS = (pattern_statistic(UnfuseRegion),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, UnfuseRegion(FOREVER))


@dataclass(frozen=True)
class ClipElementwiseRegionsPass(ModulePass):
    """Expand the mir.elementwise_regions with more ops or inputs than a target allows
    (RLX's clip_elementwise_regions).

    0 leaves that dimension unbounded.
    """

    name = "rlx-clip-elementwise-regions"
    STATISTICS = (pattern_statistic(UnfuseRegion),)

    max_steps: int = 32
    max_inputs: int = 16

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, UnfuseRegion(Caps(self.max_steps, self.max_inputs)))
