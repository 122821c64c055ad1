"""Batching rules of `mir.if` and `mir.while`.

`mir.if` batches its branches. With a shared predicate the op stays a `mir.if` on the
batched branches; with a batched predicate each example may take either branch, so both
branches run on the whole batch (inlined) and `mir.where` keeps each example's own
result, as `jax.vmap` of `lax.cond` does (the ops are pure, so running the other branch
changes nothing but the cost). `mir.while` with batched values runs a different number of
iterations per example: it is mapped over the batch (a `mir.scan` of the per-example
loop), which keeps each example's trip count exact. `mir.yield` is batched with its parent.
"""

from xdsl.ir import Operation, Region, SSAValue

from rlx_xdsl.batching.emit import example_rank, map_over_batch, materialize, reshape
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, NoBatchRule, Results, batched
from rlx_xdsl.batching.regions import batch_block, batch_region, end_block
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp
from rlx_xdsl.emitter import Emitter


@BATCH_RULES.register(IfOp)
def if_(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    assert isinstance(op, IfOp)
    pred, *captures = zip(args.values, args.batched, strict=True)
    if pred[1]:
        return select(e, op, args.size, pred[0], captures)
    flags = [b for _, b in captures]
    then_block, then_out = batch_region(op.then_region, flags, args.size)
    else_block, else_out = batch_region(op.else_region, flags, args.size)
    out = [a or b for (_, a), (_, b) in zip(then_out, else_out, strict=True)]
    end_block(then_block, then_out, out, args.size, op.location)
    end_block(else_block, else_out, out, args.size, op.location)
    new = IfOp(pred[0], [v for v, _ in captures], Region(then_block), Region(else_block))
    e.insert(new)
    return list(zip(new.results, out, strict=True))


def select(e: Emitter, op: IfOp, size: int, pred: SSAValue, captures) -> Results:
    """Both branches inlined on the batch; `where(pred != 0, then, else)` per example."""
    block = e.builder.insertion_point.block
    then_out = batch_block(op.then_region.block, captures, size, block)
    else_out = batch_block(op.else_region.block, captures, size, block)
    zero = e.mir.constant(0, tensor_type(pred).element_type)
    holds = e.mir.compare(pred, zero, predicate="ne")  # nonzero is true, NaN included
    results = []
    for result, (a, a_b), (b, b_b) in zip(op.results, then_out, else_out, strict=True):
        rank = example_rank(result)
        chosen = reshape(e, holds, [size, *([1] * rank)])
        then_v = a if a_b else materialize(e, a, size)
        results.append(e.mir.where(chosen, then_v, b))
    return batched(*results)


BATCH_RULES.add(WhileOp, map_over_batch)
BATCH_RULES.add(YieldOp, NoBatchRule("a region terminator is batched with its parent op"))
