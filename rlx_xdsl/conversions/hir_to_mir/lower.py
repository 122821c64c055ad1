"""`rlx-lower-hir{policy=direct|fusable}`: expand every HIR block op into MIR.

One pattern applies the lowering each block op class registered in `LOWERINGS`
(one function per op, next to its group), once per block signature: later blocks
of the same signature get a clone of the first one's expansion (`expansions`).
The MIR ops go before the block, each located at `NameLoc(<block label>, <block
location>)`, the provenance RLX records as `NodeOrigin{hir, label}`: `rlx-opt
--print-debuginfo` shows it and later diagnostics can name the block.
MIR ops already in the function (RLX's `HirOp::Mir` escape hatch) are left alone.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl import layers
from rlx_xdsl.conversions.hir_to_mir.expansions import Expansion, signature
from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Lowering, Policy
from rlx_xdsl.dialects.hir.base import HirOperation
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


class LowerBlockOp(RewritePattern):
    """Replace a block op by the MIR its registered lowering emits under `policy`.

    With `reuse`, a block whose signature was lowered before gets a clone of
    that expansion instead (`expansions`: same ops, built once).
    """

    def __init__(self, policy: Policy, reuse: bool = True):
        self.policy = policy
        self.reuse = reuse
        self.expansions: dict[Hashable, Expansion | None] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        lowering = LOWERINGS.lookup(op)
        if lowering is None:
            return
        assert isinstance(op, HirOperation)
        key = signature(op, self.policy) if self.reuse else None
        expansion = self.expansions.get(key) if key is not None else None
        if expansion is not None:
            rewriter.replace(op, (), expansion.clone_before(op, rewriter))
            return
        before = op.prev_op
        values = self.lower(op, lowering, rewriter)
        if key is not None:
            self.expansions[key] = Expansion.record(op, op.block_label(), ops_between(before, op), values)
        rewriter.replace(op, (), values)

    def lower(self, op: HirOperation, lowering: Lowering, rewriter: PatternRewriter) -> list[SSAValue]:
        """Emit the block's MIR before it (at its label); check the types it ends in."""
        e = Emitter.replacing(op, rewriter).labelled(op.block_label())
        values = list(lowering(e, op, self.policy))
        for result, value in zip(op.results, values, strict=True):
            if value.type != result.type:
                raise OpError(
                    op,
                    f"lowering '{op.name}' produced {value.type} where the block's result is "
                    f"{result.type} (a bug in its lowering or type inference)",
                )
        return values


def ops_between(before: Operation | None, op: Operation) -> list[Operation]:
    """The ops after `before` (or from the block start, when None) and before `op`, in order."""
    ops = []
    current = op.prev_op
    while current is not None and current is not before:
        ops.append(current)
        current = current.prev_op
    return ops[::-1]


def parse_policy(text: str) -> Policy:
    try:
        return Policy(text)
    except ValueError:
        choices = " or ".join(p.value for p in Policy)
        raise PassFailedException(f"rlx-lower-hir: unknown policy '{text}' (expected {choices})") from None


@dataclass(frozen=True)
class LowerHirPass(ModulePass):
    """Expand HIR block ops into MIR: `policy=direct` (default) emits RLX's fused ops where
    its Direct policy does, `policy=fusable` the primitive chains the fusion passes match."""

    name = "rlx-lower-hir"
    STATISTICS = (pattern_statistic(LowerBlockOp),)

    policy: str = field(default=Policy.DIRECT.value, metadata={"syntax": "direct|fusable", "example": "fusable"})

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        policy = parse_policy(self.policy)
        layers.load("hir-lowerings")
        apply_patterns(op, LowerBlockOp(policy))
        for leftover in op.walk():
            if isinstance(leftover, HirOperation):
                raise OpError(leftover, f"'{leftover.name}' has no lowering to MIR")
