"""The batching registry: one rule per op class saying how an op runs on a batch.

`rlx-vmap` gives every value a batch axis or none; a batched value carries the
batch axis in front (`[N, *shape]`, always leading: no per-value bookkeeping of
where it is, and rules that need it elsewhere move it and move it back).

    @BATCH_RULES.register(SoftmaxOp)
    def softmax(e: Emitter, op: SoftmaxOp, args: BatchArgs) -> Results:
        (x,) = args.values
        return batched(rebuild(e, op, [x], axis=shift_axis(op.axis)))

* `e` emits the batched ops, in the new function, located at `op`;
* `op` is the op of the *original* function: its operand and result types are
  the per-example types, its properties the per-example attributes;
* `args.values` are the operands' values in the new function, `args.batched`
  says which carry the leading batch axis of size `args.size` (an unbatched
  operand, a parameter, keeps its own type: rules broadcast it only where the op
  needs it, never up front). A rule is called only when some operand is batched;
* the rule returns one `(value, is_batched)` per result of `op`: a batched
  result has type `[N, *result type]`, an unbatched one the result's own type.

Rules are registered next to their group, one module per MIR group in
`rlx_xdsl.batching.rules.mir` (the layout of the VJP rules). An op that cannot be
batched registers `NoBatchRule("why")`: it is then known, with its reason, and
`rlx-vmap` reports that reason at the op. A rule that cannot handle one instance
of its op (a `?` dim it needs to know) raises `Unsupported`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.registry import OpRegistry

__all__ = ["BATCH_RULES", "BatchArgs", "BatchRule", "NoBatchRule", "Results", "Unsupported", "batched"]


@dataclass(frozen=True)
class BatchArgs:
    """The operands of one op in the batched function."""

    size: int
    """The batch size N."""
    values: Sequence[SSAValue]
    """Each operand's value in the batched function."""
    batched: Sequence[bool]
    """Whether each operand carries the leading batch axis."""


Results = Sequence[tuple[SSAValue, bool]]
"""One `(value, is_batched)` per result of the op."""
BatchRule = Callable[[Emitter, Operation, BatchArgs], Results]


def batched(*values: SSAValue) -> Results:
    """Results that all carry the leading batch axis."""
    return [(v, True) for v in values]


@dataclass(frozen=True)
class NoBatchRule:
    """Registered for an op that cannot be batched, with the reason."""

    reason: str

    def __call__(self, e: Emitter, op: Operation, args: BatchArgs) -> Results:
        raise Unsupported(self.reason)


BATCH_RULES: OpRegistry[BatchRule] = OpRegistry("batching rule")
"""How each op runs on batched operands, keyed by op class."""
