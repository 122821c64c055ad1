"""`rlx-decompose-backward{keep=...}`: rewrite backward kernels into primitive MIR.

Backends that run only primitives can then execute training graphs, and a
second reverse pass (autodiff of a gradient) finds only ops with VJP rules, as
newer RLX's `decompose_backward_ops[_except]`. Each kernel registers its rule in
`DECOMPOSITIONS`, in the rule module of its family:

    @DECOMPOSITIONS.register(ReluBackwardOp)
    def relu_backward(e: Emitter, op: ReluBackwardOp) -> SSAValue:
        ...  # emit primitives with `e`; return the value replacing op's result

A rule emits only primitive ops, so one walk suffices (RLX iterates up to six
times). `keep` names kernels to leave alone (`keep=mir.attention_backward` for a
backend with a native attention gradient). `mir.stop_gradient` has no rule: it is
an instruction to autodiff, not a kernel. A rule that needs a static dim it is
not given reports it at the kernel.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import layers
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpClass, OpRegistry
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

Rule = Callable[[Emitter, Operation], SSAValue]

DECOMPOSITIONS: OpRegistry[Rule] = OpRegistry("backward decomposition")
"""How each backward kernel is computed with primitive MIR ops, keyed by op class."""


class DecomposeRegistered(RewritePattern):
    """Replace a kernel that has a rule (and is not kept) by the primitives its rule emits."""

    def __init__(self, keep: frozenset[OpClass]):
        self.keep = keep

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        rule = DECOMPOSITIONS.lookup(op)
        if rule is None or type(op) in self.keep:
            return
        e = Emitter.replacing(op, rewriter)
        e.replace(op, rule(e, op))


def kept_classes(ctx: Context, names: tuple[str, ...]) -> frozenset[OpClass]:
    """The op classes `keep` names; an unknown name, or one without a rule, is an error."""
    classes = set()
    for name in names:
        op_class = ctx.get_optional_op(name)
        if op_class is None or op_class not in DECOMPOSITIONS:
            known = ", ".join(sorted(c.name for c in DECOMPOSITIONS))
            raise PassFailedException(
                f"rlx-decompose-backward: keep={name} names no backward kernel with a "
                f"decomposition; expected op names among: {known}"
            )
        classes.add(op_class)
    return frozenset(classes)


@dataclass(frozen=True)
class DecomposeBackwardPass(ModulePass):
    """Rewrite every backward kernel except those in `keep` into primitive MIR ops.

    `keep` lists full op names: `rlx-decompose-backward{keep=mir.attention_backward}`.
    """

    name = "rlx-decompose-backward"
    STATISTICS = (pattern_statistic(DecomposeRegistered),)

    keep: tuple[str, ...] = field(default=(), metadata={"syntax": "OP_NAME,...", "example": "mir.attention_backward"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        layers.load("decompose-backward")
        pattern = DecomposeRegistered(kept_classes(ctx, self.keep))
        apply_patterns(op, pattern)
