"""RLX's newer ("FK") region passes: transform regions, region prologues, batch regions.

In RLX's order (rlx-fusion 0.2.6's `fk_fusion`), after `rlx-mark-elementwise-regions`:

* `rlx-mark-batch-slice-regions` (`MarkBatchSliceRegions`): a `mir.concat` along axis 0
  whose operands are each one single-use unary elementwise op (the same op, same
  properties) on a `mir.narrow` along axis 0 of one tensor: each unary op becomes a
  one-op `mir.elementwise_region`, so the next passes can batch them.
* `rlx-mark-transform-regions` (`MarkTransformRegions`): each `mir.resize_nearest_2x`
  chain (a resize, then resizes each the only user of the previous one) becomes one
  `mir.transform_region`; a resize that is a prologue candidate (below) is left to
  `rlx-fuse-region-prologue`.
* `rlx-fuse-region-prologue` (`FuseRegionPrologue`): a resize used only by an
  `mir.elementwise_region` without prologue, or only by a unary elementwise op, becomes
  that region's prologue (`prologue = resize_nearest_2x on i`); the unary op becomes a
  one-op region.
* `rlx-fuse-batch-preprocess` (`FuseBatchPreprocess`): a `mir.concat` along axis 0 of
  single-use `mir.elementwise_region`s with structurally identical bodies and the same
  prologue (or none), each reading one `mir.narrow` (axis 0) of the same tensor at the
  same input position and the same values elsewhere, becomes one
  `mir.batch_elementwise_region` (the narrows its slices, the other inputs shared, the
  prologue kept: RLX's batch pre-processing of image slices upsampled, then normalised),
  in the concat's order.
* `rlx-decompose-fusion-regions` (`DecomposeFusionRegions`), for targets that do not
  run these kernels: a transform region back to its resizes, a batch region to one
  `mir.elementwise_region` per slice (with the batch region's prologue) and a
  `mir.concat`. Region prologues stay (as RLX).

Unlike RLX, a batch region's bodies may read other (shared) inputs, and the concat's
operand order (not the narrows' starts) orders the slices, so a permuted concat stays
right.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rlx_xdsl.dialects.mir.fused_regions import (
    BatchElementwiseRegionOp,
    ElementwiseRegionOp,
    Layout,
    TransformRegionOp,
)
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.dialects.mir.shape import ConcatOp, NarrowOp
from rlx_xdsl.dialects.mir.vision import ResizeNearest2xOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.fusion.elementwise_regions import build_region, is_step
from rlx_xdsl.transforms.fusion.matching import apply_patterns, owner_if, sole_user
from rlx_xdsl.transforms.statistics import pattern_statistic


def _axis0(op: ConcatOp | NarrowOp) -> bool:
    return op.axis.value.data == 0


def _unary_step(op: Operation | None) -> bool:
    """A unary elementwise op outside kernel bodies (RLX: an activation or a cast)."""
    return op is not None and is_step(op) and len(op.operands) == 1 and len(op.results) == 1


def _narrow_parent(value: SSAValue) -> SSAValue | None:
    """The tensor `value` slices along axis 0 (`mir.narrow`), or None."""
    narrow = owner_if(value, NarrowOp)
    return narrow.input if narrow is not None and _axis0(narrow) else None


def _batch_concat(op: Operation) -> bool:
    return isinstance(op, ConcatOp) and _axis0(op) and len(op.inputs) >= 2


class MarkBatchSliceRegion(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, concat: ConcatOp, rewriter: PatternRewriter) -> None:
        if not _batch_concat(concat):
            return
        ops = [v.owner for v in concat.inputs]
        first = ops[0]
        if not all(
            isinstance(op, Operation)
            and _unary_step(op)
            and sole_user(op.results[0]) is concat
            and op.name == first.name
            and op.properties == first.properties
            and op.attributes == first.attributes
            and _narrow_parent(op.operands[0]) is not None
            and _narrow_parent(op.operands[0]) == _narrow_parent(first.operands[0])
            for op in ops
        ):
            return
        for op in ops:
            e = Emitter.replacing(op, rewriter)
            e.replace(op, e.emit(build_region([op], e)))


def _prologue_candidate(resize: ResizeNearest2xOp) -> bool:
    """Used only by a region without prologue, or by a unary elementwise op."""
    user = sole_user(resize.result)
    if isinstance(user, ElementwiseRegionOp):
        return user.prologue is None
    return _unary_step(user)


class MarkTransformRegion(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, head: ResizeNearest2xOp, rewriter: PatternRewriter) -> None:
        producer = owner_if(head.input, ResizeNearest2xOp)
        if _prologue_candidate(head) or (producer is not None and sole_user(producer.result) is head):
            return  # a prologue, or part of its producer's chain
        chain = [head]
        while isinstance(next_ := sole_user(chain[-1].result), ResizeNearest2xOp) and not _prologue_candidate(next_):
            chain.append(next_)
        e = Emitter.replacing(chain[-1], rewriter).fused(chain)
        region = e.emit(TransformRegionOp(head.input, [Layout.RESIZE_NEAREST_2X] * len(chain)))
        e.replace(chain[-1], region)
        for dead in reversed(chain[:-1]):
            rewriter.erase(dead)


def _unary_body(op: Operation) -> Region:
    """A body computing the unary `op` on its one argument."""
    block = Block(arg_types=[op.operands[0].type])
    block.add_op(step := op.clone(value_mapper={op.operands[0]: block.args[0]}))
    block.add_op(YieldOp(step.results[0]))
    return Region(block)


class FuseRegionPrologue(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, ElementwiseRegionOp):
            if op.prologue is not None:
                return
            found = [
                (i, r) for i, v in enumerate(op.inputs) if (r := owner_if(v, ResizeNearest2xOp)) and sole_user(v) is op
            ]
            if not found:
                return
            index, resize = found[0]
            inputs = [*op.inputs[:index], resize.input, *op.inputs[index + 1 :]]
            body = op.body.clone()
        elif _unary_step(op) and isinstance(resize := owner_if(op.operands[0], ResizeNearest2xOp), ResizeNearest2xOp):
            if sole_user(resize.result) is not op:
                return
            index, inputs = 0, [resize.input]
            body = _unary_body(op)
        else:
            return
        e = Emitter.replacing(op, rewriter).fused([resize, op])
        region = e.insert(ElementwiseRegionOp(inputs, body, (Layout.RESIZE_NEAREST_2X, index)))
        e.replace(op, *region.results)
        rewriter.erase(resize)


def _moved_to_front(index: int, first: int) -> int:
    """Where argument `index` goes when argument `first` moves to the front."""
    return 0 if index == first else index + 1 if index < first else index


def _reordered_body(region: Region, first: int) -> Region:
    """`region`'s body with argument `first` moved to the front."""
    block = region.block
    order = [first, *(i for i in range(len(block.args)) if i != first)]
    new = Block(arg_types=[block.args[i].type for i in order])
    mapping: dict[SSAValue, SSAValue] = {block.args[i]: new.args[k] for k, i in enumerate(order)}
    for k, i in enumerate(order):
        new.args[k].name_hint = block.args[i].name_hint
    for op in block.ops:
        new.add_op(op.clone(value_mapper=mapping))
    return Region(new)


def _batch_plan(regions: Sequence[ElementwiseRegionOp]) -> tuple[int, list[SSAValue]] | None:
    """The input position the regions read their slices at and the shared inputs, or None.

    The regions' result must have the slice's shape (a batch region's body maps a slice to
    a slice of the result): shared inputs may not broadcast it to more or larger dims."""
    first = regions[0]
    count = len(first.inputs)
    if any(len(r.inputs) != count for r in regions):
        return None
    sliced = [
        p
        for p in range(count)
        if (parent := _narrow_parent(first.inputs[p])) is not None
        and all(_narrow_parent(r.inputs[p]) == parent for r in regions)
    ]
    for p in sliced:
        shared = [v for q, v in enumerate(first.inputs) if q != p]
        if first.outputs[0].type.get_shape() != first.body.block.args[p].type.get_shape():
            continue  # the shared inputs broadcast the slice (as the body reads it) to a larger shape
        if all(r.inputs[q] == first.inputs[q] for r in regions for q in range(count) if q != p):
            return p, shared
    return None


class FuseBatchPreprocess(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, concat: ConcatOp, rewriter: PatternRewriter) -> None:
        if not _batch_concat(concat):
            return
        regions = [owner_if(v, ElementwiseRegionOp) for v in concat.inputs]
        if not all(r is not None and len(r.outputs) == 1 and sole_user(r.outputs[0]) is concat for r in regions):
            return
        first = regions[0]
        if not all(r.prologue_spec == first.prologue_spec for r in regions[1:]):
            return
        if not all(r.body.is_structurally_equivalent(first.body) for r in regions[1:]):
            return
        plan = _batch_plan(regions)
        if plan is None:
            return
        position, shared = plan
        e = Emitter.replacing(concat, rewriter).fused([*regions, concat])
        slices = [r.inputs[position] for r in regions]
        prologue = first.prologue_spec
        if prologue is not None:
            prologue = (prologue[0], _moved_to_front(prologue[1], position))
        body = _reordered_body(first.body, position)
        batch = e.emit(BatchElementwiseRegionOp(slices, shared, body, prologue))
        e.replace(concat, batch)
        for r in regions:
            rewriter.erase(r)


class DecomposeFusionRegion(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if isinstance(op, TransformRegionOp):
            from rlx_xdsl.transforms.unfuse_rules.fused_regions import unfuse_transform_region

            e = Emitter.replacing(op, rewriter)
            e.replace(op, *unfuse_transform_region(e, op))
        elif isinstance(op, BatchElementwiseRegionOp):
            e = Emitter.replacing(op, rewriter)
            parts = [e.emit(ElementwiseRegionOp([s, *op.shared], op.body.clone(), op.prologue_spec)) for s in op.slices]
            e.replace(op, e.mir.concat(*parts, axis=0) if len(parts) > 1 else parts[0])


@dataclass(frozen=True)
class MarkBatchSliceRegionsPass(ModulePass):
    """Wrap `narrow(axis 0) -> unary` slices feeding one concat(axis 0) in one-op
    mir.elementwise_regions (RLX's MarkBatchSliceRegions)."""

    name = "rlx-mark-batch-slice-regions"
    STATISTICS = (pattern_statistic(MarkBatchSliceRegion),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, MarkBatchSliceRegion())


@dataclass(frozen=True)
class MarkTransformRegionsPass(ModulePass):
    """Fuse single-consumer mir.resize_nearest_2x chains into mir.transform_region
    (RLX's MarkTransformRegions)."""

    name = "rlx-mark-transform-regions"
    STATISTICS = (pattern_statistic(MarkTransformRegion),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, MarkTransformRegion())


@dataclass(frozen=True)
class FuseRegionProloguePass(ModulePass):
    """Fold a single-use 2x resize into the elementwise region (or unary op) reading it
    as the region's prologue (RLX's FuseRegionPrologue)."""

    name = "rlx-fuse-region-prologue"
    STATISTICS = (pattern_statistic(FuseRegionPrologue),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseRegionPrologue())


@dataclass(frozen=True)
class FuseBatchPreprocessPass(ModulePass):
    """Merge identical elementwise regions over axis-0 slices feeding one concat into
    one mir.batch_elementwise_region (RLX's FuseBatchPreprocess).

    Regions with a prologue merge when they share it (slices upsampled, then
    normalised): the batch region keeps the prologue."""

    name = "rlx-fuse-batch-preprocess"
    STATISTICS = (pattern_statistic(FuseBatchPreprocess),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseBatchPreprocess())


@dataclass(frozen=True)
class DecomposeFusionRegionsPass(ModulePass):
    """Expand mir.transform_region and mir.batch_elementwise_region for targets without
    their kernels (RLX's DecomposeFusionRegions)."""

    name = "rlx-decompose-fusion-regions"
    STATISTICS = (pattern_statistic(DecomposeFusionRegion),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, DecomposeFusionRegion())
