"""Batching the bodies of region ops: the rules of `mir.scan` and `mir.if` batch their
regions with the same walk `rlx-vmap` runs over a function (`vmap.Batcher`), and the
kernels with a body are batched as their unfuse rule's primitive ops the same way
(`through_unfuse_rule`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Operation, Region, SSAValue

from rlx_xdsl.batching.emit import batched_type, materialize
from rlx_xdsl.batching.registry import BatchArgs, Results
from rlx_xdsl.ir.emitter import Emitter

Batched = tuple[SSAValue, bool]


def batch_block(block: Block, inputs: Sequence[Batched], size: int, into: Block) -> list[Batched]:
    """Append `block`'s ops, batched, to `into`, its arguments taking `inputs`; return what
    its terminator hands on (each value with whether it is batched)."""
    from rlx_xdsl.batching.vmap import Batcher

    batcher = Batcher(size, into)
    batcher.values.update(zip(block.args, inputs, strict=True))
    terminator = block.last_op
    assert terminator is not None
    for op in block.ops:
        if op is not terminator:
            batcher.visit(op)
    return [batcher.values[v] for v in terminator.operands]


def batch_region(region: Region, flags: Sequence[bool], size: int) -> tuple[Block, list[Batched]]:
    """A new block for `region`'s single block whose arguments flagged in `flags` are batched,
    holding its ops batched (no terminator yet), and what it yields."""
    old = region.block
    new = Block(arg_types=[batched_type(a.type, size) if f else a.type for a, f in zip(old.args, flags, strict=True)])
    for arg, copy in zip(old.args, new.args, strict=True):
        copy.name_hint = arg.name_hint
    return new, batch_block(old, list(zip(new.args, flags, strict=True)), size, new)


def end_block(block: Block, yielded: Sequence[Batched], wanted: Sequence[bool], size: int, location) -> None:
    """End `block` with a `mir.yield` of `yielded`, broadcasting to the batch the values
    `wanted` batched that are not."""
    from rlx_xdsl.dialects.mir.regions import YieldOp

    e = Emitter.at_end(block, location)
    values = [materialize(e, v, size) if want and not b else v for (v, b), want in zip(yielded, wanted, strict=True)]
    e.insert(YieldOp(*values))


def through_unfuse_rule(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """`op` batched as the primitive ops its `rlx-unfuse` rule expands it into (the form
    `rlx-prepare-ad` and `rlx-decompose-fusion-regions` see), each batched by its own
    rule: no loop over the examples. The rule runs on a copy of `op` in a scratch block
    whose arguments stand for the operands; that block is then batched into `e`'s block
    like a region body. `rlx-fusion-pipeline` fuses the batched primitives again."""
    from rlx_xdsl import layers
    from rlx_xdsl.dialects.mir.regions import YieldOp
    from rlx_xdsl.transforms.unfuse import UNFUSE_RULES

    layers.load("unfuse")
    scratch = Block(arg_types=[v.type for v in op.operands])
    copy = op.clone(value_mapper=dict(zip(op.operands, scratch.args, strict=True)))
    scratch.add_op(copy)
    outputs = UNFUSE_RULES[type(op)](Emitter.before(copy), copy)
    scratch.add_op(YieldOp(*outputs))
    scratch.erase_op(copy)
    into = e.builder.insertion_point.block
    return batch_block(scratch, list(zip(args.values, args.batched, strict=True)), args.size, into)
