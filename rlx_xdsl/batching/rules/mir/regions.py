"""Batching rules of `mir.if` and `mir.while`.

`mir.if` batches its branches. With a shared predicate the op stays a `mir.if` on the
batched branches; with a batched predicate each example may take either branch, so both
branches run on the whole batch (inlined) and `mir.where` keeps each example's own
result, as `jax.vmap` of `lax.cond` does (the ops are pure, so running the other branch
changes nothing but the cost).

`mir.while` batches its body and condition; the carried values that become batched are
found by iterating to a fixed point. A shared condition keeps one loop. A batched one
(examples stop at different steps) runs until every example is done, masking: each step
recomputes every example's condition and keeps the old values of the examples already
done (`mir.where`), as `jax.vmap` of `lax.while_loop`; `max_iterations` bounds each
example as before. `mir.yield` is batched with its parent.
"""

from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_xdsl.batching.emit import batched_type, example_rank, materialize, reshape
from rlx_xdsl.batching.regions import Batched, batch_block, batch_region, end_block
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, NoBatchRule, Results, batched
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp
from rlx_xdsl.ir.emitter import Emitter


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
    holding = holds(e, pred)
    results = []
    for result, (a, a_b), (b, b_b) in zip(op.results, then_out, else_out, strict=True):
        rank = example_rank(result)
        chosen = reshape(e, holding, [size, *([1] * rank)])
        then_v = a if a_b else materialize(e, a, size)
        results.append(e.mir.where(chosen, then_v, b))
    return batched(*results)


def holds(e: Emitter, pred: SSAValue) -> SSAValue:
    """A predicate as i1: nonzero is true (NaN included), as `mir.if` and `mir.while` read it."""
    return e.mir.compare(pred, e.mir.constant(0, tensor_type(pred).element_type), predicate="ne")


def carried_flags(op: WhileOp, flags: list[bool], size: int) -> tuple[Block, list[Batched]]:
    """The body batched with the carried values that end up batched (a fixed point)."""
    while True:
        body, out = batch_region(op.body_region, flags, size)
        grown = [f or b for f, (_, b) in zip(flags, out, strict=True)]
        if grown == flags:
            return body, out
        flags[:] = grown


@BATCH_RULES.register(WhileOp)
def while_(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    assert isinstance(op, WhileOp)
    flags = list(args.batched)
    body, out = carried_flags(op, flags, args.size)
    cond, (pred,) = batch_region(op.cond_region, flags, args.size)
    if pred[1]:  # examples stop at different steps: every carried value is per example
        flags = [True] * len(flags)
        cond, body = masked_regions(op, args.size)
    else:
        end_block(cond, [pred], [False], args.size, op.location)
        end_block(body, out, flags, args.size, op.location)
    init = [materialize(e, v, args.size) if f and not b else v
            for v, f, b in zip(args.values, flags, args.batched, strict=True)]  # fmt: skip
    new = WhileOp(init, Region(cond), Region(body), max_iterations=op.iteration_limit)
    e.insert(new)
    return list(zip(new.results, flags, strict=True))


def masked_regions(op: WhileOp, size: int) -> tuple[Block, Block]:
    """cond: does any example go on; body: one step for the examples that go on."""
    types = [batched_type(v.type, size) for v in op.init]
    cond = Block(arg_types=types)
    (pred, _), = batch_block(op.cond_region.block, [(a, True) for a in cond.args], size, cond)
    ce = Emitter.at_end(cond, op.location)
    going = ce.mir.cast(holds(ce, pred), "f32")
    ce.insert(YieldOp(ce.mir.reduce(going, kind="max", axes=list(range(example_rank(going))))))
    body = Block(arg_types=types)
    carried = [(a, True) for a in body.args]
    (pred, _), = batch_block(op.cond_region.block, carried, size, body)
    stepped = batch_block(op.body_region.block, carried, size, body)
    be = Emitter.at_end(body, op.location)
    active = holds(be, pred)
    kept = []
    for old, (new, is_batched) in zip(body.args, stepped, strict=True):
        mask = reshape(be, active, [size, *([1] * (example_rank(old) - 1))])
        kept.append(be.mir.where(mask, new if is_batched else materialize(be, new, size), old))
    be.insert(YieldOp(*kept))
    return cond, body

BATCH_RULES.add(YieldOp, NoBatchRule("a region terminator is batched with its parent op"))
