"""Batching rules of the reductions: their axes shift past the batch axis."""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import example_rank, int_prop, ints_prop, rebuilt, shift_axis
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.reduction import CumsumOp, ReduceOp, SoftmaxOp, TopkOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import normalize_axis


@BATCH_RULES.register(ReduceOp)
def reduce(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    rank = example_rank(op.operands[0])
    axes = [normalize_axis(a, rank) + 1 for a in ints_prop(op, "axes")]
    return rebuilt(e, op, args.values, axes=axes)


@BATCH_RULES.register(SoftmaxOp, CumsumOp)
def along_axis(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return rebuilt(e, op, args.values, axis=shift_axis(int_prop(op, "axis")))


@BATCH_RULES.register(TopkOp)
def topk(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """The last axis stays the last axis."""
    return rebuilt(e, op, args.values)
