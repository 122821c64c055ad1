"""`rlx-legalize-broadcast`: explicit `mir.expand`s for backends whose elementwise kernels
need equal shapes (RLX's `LegalizeBroadcast`).

An operand of an elementwise op whose shape differs from the result's gets an expand
to the result shape, unless the backend broadcasts it anyway: a one-element operand
(a scalar), or a trailing suffix of the result shape with identical dims (a bias).
Ops inside fused regions are left alone. A `?` result dim is kept (-1) where the operand has the same `?` dim; any other
broadcast into a `?` dim cannot be spelled and is reported at the op.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import fused_regions
from rlx_xdsl.dialects.traits import is_elementwise
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, num_elements
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


def broadcasts_natively(shape: Sequence[int], out: Sequence[int]) -> bool:
    """Equal, one element, or a trailing suffix of `out` with identical dims."""
    shape, out = tuple(shape), tuple(out)
    if shape == out or num_elements(shape) == 1:
        return True
    return len(shape) < len(out) and out[len(out) - len(shape) :] == shape and DYNAMIC not in shape


def target_shape(op: Operation, shape: Sequence[int], out: Sequence[int]) -> list[int]:
    """`out` as an expand target for `shape` (a `?` dim the operand shares is -1)."""
    lead = len(out) - len(shape)
    target = []
    for i, d in enumerate(out):
        if d != DYNAMIC:
            target.append(d)
        elif i >= lead and shape[i - lead] == DYNAMIC:
            target.append(-1)
        else:
            raise OpError(
                op,
                f"'{op.name}' cannot make the broadcast of {fmt_shape(shape)} to {fmt_shape(out)} "
                f"explicit: dim {i} is dynamic in the result only",
            )
    return target


def _in_fused_region(op: Operation) -> bool:
    """Inside a fused region's body, where only the region's own ops may stand."""
    parent = op.parent_op()
    return parent is not None and type(parent) in fused_regions.OPS


class ExpandOperands(RewritePattern):
    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if not is_elementwise(op) or len(op.results) != 1 or not op.operands or _in_fused_region(op):
            return
        out = tensor_type(op.results[0]).get_shape()
        changed = False
        for index, operand in enumerate(op.operands):
            shape = tensor_type(operand).get_shape()
            if broadcasts_natively(shape, out):
                continue
            e = Emitter.before(op, rewriter)
            op.operands[index] = e.mir.expand(operand, target_shape=target_shape(op, shape, out))
            changed = True
        if changed:
            rewriter.notify_op_modified(op)


@dataclass(frozen=True)
class LegalizeBroadcastPass(ModulePass):
    """Insert mir.expand where an elementwise operand broadcasts other than as a scalar or a trailing suffix."""

    name = "rlx-legalize-broadcast"

    STATISTICS = (pattern_statistic(ExpandOperands),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, ExpandOperands())
