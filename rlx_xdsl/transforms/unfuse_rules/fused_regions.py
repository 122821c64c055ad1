"""Unfuse rules of the MIR kernels with a body: their bodies, inlined."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.fused_regions import (
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.inlining import inline_block
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


@UNFUSE_RULES.register(ElementwiseRegionOp)
def unfuse_elementwise_region(e: Emitter, op: ElementwiseRegionOp) -> Sequence[SSAValue]:
    """The body's ops on the inputs (compare steps keep their i1 results: they are real ops)."""
    return inline_block(e, op.body.block, op.inputs)


@UNFUSE_RULES.register(FusedMatmulEpilogueOp)
def unfuse_matmul_epilogue(e: Emitter, op: FusedMatmulEpilogueOp) -> Sequence[SSAValue]:
    """`mir.matmul`, then the body's ops on its result and the extras."""
    return inline_block(e, op.body.block, [e.mir.matmul(op.lhs, op.rhs), *op.extras])
