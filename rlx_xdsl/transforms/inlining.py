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
