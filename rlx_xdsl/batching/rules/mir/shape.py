"""Batching rules of the shape ops: the batch axis is one more leading dim."""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import int_prop, ints_prop, leading, pad_rank, rebuilt, shift_axis
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.shape import ConcatOp, ExpandOp, NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.ir.emitter import Emitter


@BATCH_RULES.register(ReshapeOp)
def reshape(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return rebuilt(e, op, args.values, new_shape=[args.size, *ints_prop(op, "new_shape")])


@BATCH_RULES.register(TransposeOp)
def transpose(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return rebuilt(e, op, args.values, perm=[0, *(p + 1 for p in ints_prop(op, "perm"))])


@BATCH_RULES.register(NarrowOp)
def narrow(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return rebuilt(e, op, args.values, axis=shift_axis(int_prop(op, "axis")))


@BATCH_RULES.register(ConcatOp)
def concat(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """Every piece needs the batch axis (a shared piece is repeated for each example)."""
    return leading(e, op, args, range(len(args.values)), axis=shift_axis(int_prop(op, "axis")))


@BATCH_RULES.register(ExpandOp)
def expand(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    target = ints_prop(op, "target_shape")
    x = pad_rank(e, args.values[0], len(target))  # line the input up with the target's trailing dims
    if len(args.values) == 1:
        return rebuilt(e, op, [x], target_shape=[args.size, *target])
    shift = int(args.batched[1])  # a batched `like` has the batch axis first
    like_dims = [-1, *(k + shift if k >= 0 else -1 for k in ints_prop(op, "like_dims"))]
    return rebuilt(e, op, [x, args.values[1]], target_shape=[args.size, *target], like_dims=like_dims)
