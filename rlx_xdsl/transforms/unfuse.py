"""`rlx-unfuse`: expand composite ops (fused ops, state-space ops...) into primitive MIR.

Autodiff and backends without a fused kernel need the primitive form. Each
composite op registers how it expands in `UNFUSE_RULES`, next to its group:

    @UNFUSE_RULES.register(FusedSwiGLUOp)
    def unfuse_swiglu(e: Emitter, op: FusedSwiGLUOp) -> Sequence[SSAValue]:
        ...  # emit the primitive chain with `e`, return the values replacing op's results

The pass applies every registered rule with one pattern; the emitter places the
new ops before the composite op, at its location.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from rlx_xdsl import layers
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

UnfuseRule = Callable[[Emitter, Operation], Sequence[SSAValue]]

UNFUSE_RULES: OpRegistry[UnfuseRule] = OpRegistry("unfuse rule")
"""How each composite op expands into primitive ops, keyed by op class."""


class UnfuseRegistered(RewritePattern):
    """Replace any op that has an unfuse rule by the ops its rule emits."""

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = UNFUSE_RULES.lookup(op)
        if rule is None:
            return
        e = Emitter.replacing(op, rewriter)
        e.replace(op, *rule(e, op))


@dataclass(frozen=True)
class UnfusePass(ModulePass):
    """Expand every composite op that has an unfuse rule into primitive MIR ops."""

    name = "rlx-unfuse"
    STATISTICS = (pattern_statistic(UnfuseRegistered),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        layers.load("unfuse")
        apply_patterns(op, UnfuseRegistered(), recursive=True)
