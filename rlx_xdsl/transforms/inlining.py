"""Copying a region's body into the enclosing block (inlining), for lowerings and unfusing.

`mir.if` lowering inlines both branches, `mir.while` unrolling its cond and
body once per iteration, and unfusing a kernel with a body (`mir.elementwise_region`,
`mir.fused_matmul_epilogue`) its region. Every copied op keeps its own location,
so diagnostics and the fusion report still point at the source line of the
body op (RLX's inliner drops provenance).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Block, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint
from xdsl.traits import IsTerminator

from rlx_xdsl.ir.emitter import Emitter


def inline_block(e: Emitter, block: Block, values: Sequence[SSAValue]) -> list[SSAValue]:
    """Copy `block`'s ops to `e`'s insertion point with its arguments bound to `values`.

    Returns the copies of the values the block's terminator yields (a yielded
    block argument is its bound value).
    """
    mapping: dict[SSAValue, SSAValue] = dict(zip(block.args, values, strict=True))
    for op in block.ops:
        if op.has_trait(IsTerminator):
            return [mapping.get(v, v) for v in op.operands]
        e.insert(op.clone(value_mapper=mapping))
    raise ValueError("the block has no terminator")


def move_block(rewriter: PatternRewriter, block: Block, values: Sequence[SSAValue], point: InsertPoint) -> list[SSAValue]:
    """Move `block`'s ops (not copies) to `point` with its arguments bound to `values`.

    For a block used once, such as a `mir.if` branch: no op is copied, and an op
    with regions moves as one op (copying it would copy every op nested in it,
    so lowering nested `if`s level by level would take time quadratic in their
    depth). `block` is erased.
    Returns the values its terminator yielded.
    """
    terminator = block.last_op
    if terminator is None or not terminator.has_trait(IsTerminator):
        raise ValueError("the block has no terminator")
    rewriter.inline_block(block, point, values)
    yielded = list(terminator.operands)
    rewriter.erase(terminator)
    return yielded
