"""Batching rules of the shape ops: the batch axis is one more leading dim."""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import int_prop, ints_prop, leading, materialize, pad_rank, rebuilt, shift_axis
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.shape import ConcatOp, ExpandOp, NarrowOp, ReshapeOp, TransposeOp
from rlx_xdsl.ir.emitter import Emitter


def _like_dims(op: Operation, args: BatchArgs) -> dict[str, list[int]]:
    """`like_dims` for the batched result (one more leading dim, not sized by `like`;
    a batched `like` has the batch axis first), or nothing without a `like`."""
    if len(args.values) == 1:
        return {}
    shift = int(args.batched[1])
    return {"like_dims": [-1, *(k + shift if k >= 0 else -1 for k in ints_prop(op, "like_dims"))]}


def _batched_input(e: Emitter, args: BatchArgs) -> list:
    """The operands with the input batched (materialised when only `like` is)."""
    x = args.values[0] if args.batched[0] else materialize(e, args.values[0], args.size)
    return [x, *args.values[1:]]


@BATCH_RULES.register(ReshapeOp)
def reshape(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    new_shape = [args.size, *ints_prop(op, "new_shape")]
    return rebuilt(e, op, _batched_input(e, args), new_shape=new_shape, **_like_dims(op, args))


@BATCH_RULES.register(TransposeOp)
def transpose(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return rebuilt(e, op, args.values, perm=[0, *(p + 1 for p in ints_prop(op, "perm"))])


@BATCH_RULES.register(NarrowOp)
def narrow(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    axis = shift_axis(int_prop(op, "axis"))
    return rebuilt(e, op, _batched_input(e, args), axis=axis, **_like_dims(op, args))


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
    return rebuilt(e, op, [x, args.values[1]], target_shape=[args.size, *target], **_like_dims(op, args))
