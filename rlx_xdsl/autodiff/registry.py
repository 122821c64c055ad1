"""The VJP registry: one reverse-mode rule per op class.

A rule says how the cotangent of an op's results flows back to its operands:

    @VJP_RULES.register(MulOp)
    def mul(e: Emitter, op: MulOp, cotangents: Cotangents) -> Gradients:
        (g,) = cotangents
        return [unbroadcast(e, e.mir.mul(g, op.rhs), op.lhs),
                unbroadcast(e, e.mir.mul(g, op.lhs), op.rhs)]

* `e` emits the backward ops (`e.mir.<op>(...)`), at the end of the gradient
  function, located at the forward op;
* `op` is the forward op *in the gradient function* (a copy of the forward
  function), so its operands and results are the recomputed forward values;
* `cotangents` holds one entry per result of `op`: the gradient of the loss
  with respect to that result (same type), or None when no gradient reaches
  it (an unused result, an integer result). At least one is not None;
* the rule returns one entry per operand: its cotangent, of exactly the
  operand's type, or None for "no gradient" (an index operand, a constant
  zero derivative), or a function of no arguments that emits and returns the
  cotangent (or None) when called. `rlx-grad` calls such a function only for
  an operand that needs a gradient (one that depends on a `wrt` argument):
  a rule wraps a gradient in `lambda: ...` so that nothing is emitted for an
  input or a constant table. Entries for operands that carry no gradient
  (integer or `i1` values, INDEX/LABEL/PREDICATE/MASK operands) are ignored.

Rules are registered next to their group, one module per MIR group in
`rlx_xdsl.autodiff.rules.mir` (the layout of the interpreter). Another dialect
registers rules for its own ops the same way (`VJP_RULES.add(MyOp, my_rule)`),
and `rlx-grad` differentiates through them. An op whose derivative is zero or
undefined everywhere it matters (comparisons, `iota`, `stop_gradient`)
registers `no_gradient`: it is then known, not missing.

A rule that cannot handle one instance of its op (a `?` dim it needs to know)
raises `Unsupported("...")`; `rlx-grad` reports it at the op.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry

Cotangents = Sequence[SSAValue | None]
"""One entry per result of the forward op: its cotangent, or None."""
Gradient = SSAValue | Callable[[], SSAValue | None] | None
"""An operand's cotangent, None, or a function emitting it on demand."""
Gradients = Sequence[Gradient]
"""One entry per operand of the forward op."""
VjpRule = Callable[[Emitter, Operation, Cotangents], Gradients]

VJP_RULES: OpRegistry[VjpRule] = OpRegistry("VJP rule")
"""How each op's cotangents flow back to its operands, keyed by op class."""


COMPLEX_RULES: OpRegistry[Callable[[Operation], bool]] = OpRegistry("complex VJP rule")
"""Ops whose VJP rule is right on complex<f32> values (JAX's convention), keyed by op class;
the entry tells whether it holds for one instance (`always`, or e.g. only a reduce sum).
`rlx-grad` refuses to pull a complex cotangent through any other rule, which was written and
checked for real values: a located error, never a silently wrong gradient."""


def always(op: Operation) -> bool:
    return True


class Unsupported(Exception):
    """A rule cannot differentiate this instance of its op; the message says why."""


def no_gradient(e: Emitter, op: Operation, cotangents: Cotangents) -> Gradients:
    """The rule of ops through which no gradient flows: every operand gets None."""
    return [None] * len(op.operands)
