"""The JVP registry: one forward-mode rule per op class.

A rule says how tangents of an op's operands push forward to its results:

    @JVP_RULES.register(MulOp)
    def mul(e: Emitter, op: MulOp, tangents: Tangents) -> OutTangents:
        t_lhs, t_rhs = tangents
        return [add_tangents(e, t_lhs and e.mir.mul(t_lhs, op.rhs),
                                t_rhs and e.mir.mul(op.lhs, t_rhs))]

* `e` emits the tangent ops, in the JVP function, located at the forward op;
* `op` is the forward op *in the JVP function* (a copy of the forward
  function), so its operands and results are the primal values there;
* `tangents` holds one entry per operand: its tangent (same type as the
  operand) or None, a *symbolic zero*: nothing is emitted for a zero tangent,
  and a rule whose tangents are all None is not called (every result gets None);
* the rule returns one entry per result: its tangent, of exactly the result's
  type, or None for a zero tangent.

Rules are registered next to their group, one module per MIR group in
`rlx_xdsl.autodiff.jvp_rules.mir` (the layout of the VJP rules). An op whose
outputs do not depend differentiably on its inputs (comparisons, `iota`,
`stop_gradient`, random draws) registers `zero_tangent`. An op that cannot have
a rule registers `NoJvpRule("why")`: it is then known, with its reason, and
`rlx-jvp` reports that reason at the op. A rule that cannot handle one instance
of its op raises `Unsupported` (shared with the VJP rules).

A rule whose natural form computes the primal results again beside their
tangents (a `mir.scan` over `(carry, tangent carry)`, a `mir.if` whose branches
yield both) returns `Rebuilt(primals, tangents)`: `rlx-jvp` then uses `primals`
in place of the op's results, and the op, now unused, is removed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry

Tangents = Sequence[SSAValue | None]
"""One entry per operand of the forward op: its tangent, or None (a symbolic zero)."""
OutTangents = Sequence[SSAValue | None]
"""One entry per result of the forward op: its tangent, or None (a symbolic zero)."""


@dataclass(frozen=True)
class Rebuilt:
    """A rule's answer that also replaces the op's results (an op rebuilt over primal and tangent)."""

    primals: Sequence[SSAValue]
    tangents: OutTangents


JvpRule = Callable[[Emitter, Operation, Tangents], "OutTangents | Rebuilt"]


@dataclass(frozen=True)
class NoJvpRule:
    """Registered for an op that has no forward-mode rule, with the reason."""

    reason: str

    def __call__(self, e: Emitter, op: Operation, tangents: Tangents) -> OutTangents:
        raise Unsupported(self.reason)


JVP_RULES: OpRegistry[JvpRule] = OpRegistry("JVP rule")
"""How each op's operand tangents push forward to its results, keyed by op class."""


def zero_tangent(e: Emitter, op: Operation, tangents: Tangents) -> OutTangents:
    """The rule of ops whose results have zero derivative: every result gets None."""
    return [None] * len(op.results)
