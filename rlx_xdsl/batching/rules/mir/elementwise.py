"""Batching rules of the elementwise group: every op with the `Elementwise` trait broadcasts."""

from rlx_xdsl.batching.emit import broadcasting, ints_prop, rebuild
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, NoBatchRule, Results
from rlx_xdsl.dialects.mir import elementwise as group
from rlx_xdsl.dialects.traits import is_elementwise
from rlx_xdsl.ir.emitter import Emitter

NO_OPERANDS = NoBatchRule("it takes no operands, so it is never batched (it is copied as it is)")

for _op in group.OPS:
    if _op is not group.IotaOp:
        BATCH_RULES.add(_op, broadcasting if is_elementwise(_op) else NO_OPERANDS)


@BATCH_RULES.register(group.IotaOp)
def iota(e: Emitter, op: group.IotaOp, args: BatchArgs) -> Results:
    """Reached only through a batched `like`: the ramp is the same for every example, and
    `like`'s dims it reads are one axis on."""
    like_dims = [k + 1 if k >= 0 else -1 for k in ints_prop(op, "like_dims")]
    return [(rebuild(e, op, args.values, like_dims=like_dims).results[0], False)]
