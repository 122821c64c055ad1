"""Unfuse rules of the MIR kernels with a body: their bodies, inlined."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.fused_regions import (
    BatchElementwiseRegionOp,
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
    Layout,
    PrologueMixin,
    TransformRegionOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.inlining import inline_block
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


def emit_layout(e: Emitter, step: Layout, x: SSAValue) -> SSAValue:
    """The primitive op of one layout step."""
    assert step is Layout.RESIZE_NEAREST_2X
    return e.mir.resize_nearest_2x(x)


def read(e: Emitter, op: PrologueMixin, index: int, value: SSAValue) -> SSAValue:
    """What body argument `index` reads of its operand `value`: upsampled by the prologue's
    primitive op when it is the prologue's input."""
    spec = op.prologue_spec
    return emit_layout(e, spec[0], value) if spec is not None and spec[1] == index else value


@UNFUSE_RULES.register(ElementwiseRegionOp)
def unfuse_elementwise_region(e: Emitter, op: ElementwiseRegionOp) -> Sequence[SSAValue]:
    """The prologue's primitive op, then the body's ops on the inputs (compare steps keep
    their i1 results: they are real ops)."""
    return inline_block(e, op.body.block, [read(e, op, i, v) for i, v in enumerate(op.inputs)])


@UNFUSE_RULES.register(TransformRegionOp)
def unfuse_transform_region(e: Emitter, op: TransformRegionOp) -> Sequence[SSAValue]:
    """Each step's primitive op (`mir.resize_nearest_2x`), in order."""
    x = op.input
    for step in op.layouts:
        x = emit_layout(e, step, x)
    return [x]


@UNFUSE_RULES.register(BatchElementwiseRegionOp)
def unfuse_batch_elementwise_region(e: Emitter, op: BatchElementwiseRegionOp) -> Sequence[SSAValue]:
    """The body's ops on each slice (with the shared inputs; the prologue's primitive op on
    each slice, or once on its shared input), then `mir.concat` along axis 0."""
    shared = [read(e, op, 1 + k, v) for k, v in enumerate(op.shared)]
    parts = [inline_block(e, op.body.block, [read(e, op, 0, s), *shared])[0] for s in op.slices]
    return [e.mir.concat(*parts, axis=0) if len(parts) > 1 else parts[0]]


@UNFUSE_RULES.register(FusedMatmulEpilogueOp)
def unfuse_matmul_epilogue(e: Emitter, op: FusedMatmulEpilogueOp) -> Sequence[SSAValue]:
    """`mir.matmul`, then the body's ops on its result and the extras."""
    return inline_block(e, op.body.block, [e.mir.matmul(op.lhs, op.rhs), *op.extras])
