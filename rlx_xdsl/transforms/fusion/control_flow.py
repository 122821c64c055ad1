"""`rlx-lower-control-flow`: `mir.if` to `mir.where`, bounded `mir.while` unrolled.

RLX's `LowerControlFlow` (`inline_if`, then `unroll_while`), which fusion
needs first because regions hide their ops from the patterns:

* `mir.if`: both branches are inlined (their captures bound to the operands)
  and each result becomes `where(pred, then_value, else_value)`. RLX keeps only
  the first result; here **every** result is kept. The predicate (one element)
  is reshaped to a scalar, so the select broadcasts exactly to the result.
* `mir.while` with `max_iterations = N`: N copies of cond and body. Iteration
  i runs the body on the current values, and each carried value becomes
  `where(active, body_value, previous)`, where `active` holds while every
  condition so far held, so values freeze once the loop would have stopped.
  RLX keeps only the first carried value; here **every** one is kept.
* a `mir.while` without a bound cannot be unrolled: a located error.

Both branches (and every body copy) are evaluated whatever the condition;
that is RLX's semantics, harmless for the pure ops regions hold. Inlined ops
keep their source locations (RLX loses HIR provenance here).

A branch's ops are moved out, not copied, outermost `if` first: an inner `if`
moves out as one op, so no op is moved or copied once per level and time is
linear in the nesting depth. `num-inlined-ops` counts the ops moved or copied out of
regions (a loop body is copied once per iteration).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of
from rlx_xdsl.transforms.fusion.matching import apply_patterns
from rlx_xdsl.transforms.inlining import inline_block, move_block
from rlx_xdsl.transforms.statistics import Statistic, pattern_statistic

INLINED_OPS = Statistic("num-inlined-ops", "Number of ops moved or copied out of regions (copies of nested ones included)")


def scalar_truth(e: Emitter, pred: SSAValue) -> SSAValue:
    """A rank-0 i1 that is true when the one-element `pred` is nonzero (what the interpreter tests)."""
    if dtypes.dtype_of(pred.type.element_type).kind != "bool":
        import numpy as np  # here only: graphs without control flow never load it

        zero = e.mir.constant(np.zeros((), dtypes.numpy_dtype(pred.type.element_type)))
        pred = e.mir.compare(pred, zero, "ne")
    return pred if shape_of(pred.type) == () else e.mir.reshape(pred, new_shape=[])


class InlineIf(RewritePattern):
    """`mir.if` becomes both branches inlined and one `where` per result."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: IfOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        point = InsertPoint.before(op)
        branches = op.then_region.block, op.else_region.block
        INLINED_OPS.add(sum(len(block.ops) - 1 for block in branches))
        then_values, else_values = (move_block(rewriter, block, op.captures, point) for block in branches)
        truth = scalar_truth(e, op.pred)
        e.replace(op, *(e.mir.where(truth, t, f) for t, f in zip(then_values, else_values)))


class UnrollWhile(RewritePattern):
    """A bounded `mir.while` becomes `max_iterations` frozen-update copies of cond and body."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: WhileOp, rewriter: PatternRewriter) -> None:
        limit = op.iteration_limit
        if limit is None:
            raise OpError(
                op,
                f"'{op.name}' without max_iterations cannot be unrolled by rlx-lower-control-flow "
                "(give the loop a bound)",
            )
        e = Emitter.replacing(op, rewriter)
        carried = list(op.init)
        active: SSAValue | None = None
        for _ in range(limit):
            (cond,) = _copy(e, op.cond_region.block, carried)
            holds = scalar_truth(e, cond)
            active = holds if active is None else e.mir.where(active, holds, active)
            updated = _copy(e, op.body_region.block, carried)
            carried = [e.mir.where(active, new, old) for new, old in zip(updated, carried)]
        e.replace(op, *carried)


def _copy(e: Emitter, block: Block, values: Sequence[SSAValue]) -> list[SSAValue]:
    """`inline_block`, counting the ops it copies (those in nested regions too) in `INLINED_OPS`."""
    INLINED_OPS.add(sum(1 for _ in block.walk()) - 1)
    return inline_block(e, block, values)


@dataclass(frozen=True)
class LowerControlFlowPass(ModulePass):
    """Lower mir.if to where and unroll bounded mir.while loops, keeping every result (RLX's LowerControlFlow).

    A mir.while without max_iterations is an error.
    """

    name = "rlx-lower-control-flow"
    STATISTICS = (pattern_statistic(InlineIf), pattern_statistic(UnrollWhile), INLINED_OPS)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, InlineIf(), UnrollWhile(), recursive=True)
