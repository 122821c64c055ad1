"""The steps of `rlx-prepare-ad` for structured ops (RLX's `prepare_ad.rs` items 6 and 7).

* `inline-custom-fn`: a `mir.custom_fn` without a vjp body is replaced by its
  forward body, which `rlx-grad` then differentiates op by op. RLX inlines only
  when both the vjp and the jvp bodies are absent, so a custom_fn with only a
  jvp body reaches the VJP and panics there; here the jvp body plays no part.
* `materialize-scan-bcasts`: each bcast `b` of a `mir.scan` becomes an xs
  `expand(b) : [length, *b]` placed before the other xs. The body's block
  arguments do not change (a bcast and a materialised x_t have the same type),
  and the gradient of `b` is the sum over steps, by `mir.expand`'s rule. RLX
  multiplies `b` by a constant of ones, which it can only build in f32/f64.
* `convert-scans-for-ad`: a scan returning its final carries is made to save its
  trajectory (`[K, *carry]` with `num_checkpoints = K`, else `[length, *carry]`),
  and each final carry is read back from the last row. RLX narrows row
  `length - 1`, which does not exist in a checkpointed trajectory of `K < length`
  rows; the last row is `K - 1`.

Nested scans and custom functions (inside another region) are rewritten too.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.autodiff.prepare_steps import PREPARE_STEPS
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.structured import CustomFnOp, ScanOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.inlining import inline_block
from rlx_xdsl.transforms.rewriting import apply_patterns


def _as_dims(shape) -> list[int]:
    return [-1 if d == DYNAMIC else d for d in shape]


def _name_after(value: SSAValue, source: SSAValue, suffix: str) -> None:
    """Name `value` after `source` (`%w` -> `%w_steps`), when `source` has a name."""
    if source.name_hint and SSAValue.is_valid_name(source.name_hint + suffix):
        value.name_hint = source.name_hint + suffix


# inline-custom-fn -----------------------------------------------------------------------


def _inlined_for_ad(op: Operation) -> bool:
    return isinstance(op, CustomFnOp) and op.vjp is None


class InlineCustomFn(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: CustomFnOp, rewriter: PatternRewriter) -> None:
        if _inlined_for_ad(op):
            e = Emitter.replacing(op, rewriter)
            e.replace(op, *inline_block(e, op.forward.block, list(op.inputs)))


@PREPARE_STEPS.implement("inline-custom-fn", rewrites=_inlined_for_ad)
def inline_custom_fn(module: ModuleOp) -> None:
    apply_patterns(module, InlineCustomFn(), recursive=True)


# materialize-scan-bcasts ------------------------------------------------------------------


def _has_bcasts(op: Operation) -> bool:
    return isinstance(op, ScanOp) and len(op.bcasts) > 0


def _rebuilt_scan(
    op: ScanOp, rewriter: PatternRewriter, bcasts: list[SSAValue], xs: list[SSAValue], save_trajectory: bool
) -> ScanOp:
    """`op` with the given bcasts and xs, and its body moved over."""
    body = rewriter.move_region_contents_to_new_regions(op.body)
    return ScanOp(
        list(op.init),
        body,
        length=op.steps,
        bcasts=bcasts,
        xs=xs,
        save_trajectory=save_trajectory,
        num_checkpoints=op.checkpoints,
    )


class MaterializeBcasts(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        if not _has_bcasts(op):
            return
        e = Emitter.replacing(op, rewriter)
        stacked = [
            e.mir.expand(b, target_shape=[op.steps, *_as_dims(tensor_type(b).get_shape())]) for b in op.bcasts
        ]
        for value, b in zip(stacked, op.bcasts):
            _name_after(value, b, "_steps")
        scan = _rebuilt_scan(op, rewriter, [], [*stacked, *op.xs], op.saves_trajectory)
        e.insert(scan)
        e.replace(op, *scan.outputs)


@PREPARE_STEPS.implement("materialize-scan-bcasts", rewrites=_has_bcasts)
def materialize_scan_bcasts(module: ModuleOp) -> None:
    apply_patterns(module, MaterializeBcasts(), recursive=True)


# convert-scans-for-ad ---------------------------------------------------------------------


def _returns_final_carry(op: Operation) -> bool:
    return isinstance(op, ScanOp) and not op.saves_trajectory


def last_row(e: Emitter, trajectory: SSAValue, like: SSAValue) -> SSAValue:
    """Row `rows - 1` of `trajectory` (`[rows, *carry]`), typed as `like` (the carry).

    Read by `narrow` and a `reshape`; a carry with several `?` dims (which one
    reshape cannot spell) drops the unit axis by a sum over it instead.
    """
    rows = tensor_type(trajectory).get_shape()[0]
    row = e.mir.narrow(trajectory, axis=0, start=rows - 1, len=1)
    shape = tensor_type(like).get_shape()
    if list(shape).count(DYNAMIC) > 1:
        return e.mir.reduce(row, kind="sum", axes=[0])
    return e.mir.reshape(row, new_shape=_as_dims(shape))


class SaveTrajectory(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ScanOp, rewriter: PatternRewriter) -> None:
        if not _returns_final_carry(op):
            return
        e = Emitter.replacing(op, rewriter)
        carries = list(op.outputs)
        scan = _rebuilt_scan(op, rewriter, list(op.bcasts), list(op.xs), save_trajectory=True)
        e.insert(scan)
        for trajectory, carry in zip(scan.outputs, carries):
            _name_after(trajectory, carry, "_trajectory")
        e.replace(op, *(last_row(e, t, c) for t, c in zip(scan.outputs, carries)))


@PREPARE_STEPS.implement("convert-scans-for-ad", rewrites=_returns_final_carry)
def convert_scans_for_ad(module: ModuleOp) -> None:
    apply_patterns(module, SaveTrajectory(), recursive=True)
