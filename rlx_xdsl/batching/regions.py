"""Batching the bodies of region ops: the rules of `mir.scan` and `mir.if` batch their
regions with the same walk `rlx-vmap` runs over a function (`vmap.Batcher`)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, Region, SSAValue

from rlx_xdsl.batching.emit import batched_type, materialize
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
