"""Batching rules of gather and scatter_add (the batch rides along a free dim, moved in front)
and of dynamic_update_slice (the batch is one more dim, written whole from start 0)."""

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.batching.emit import all_batched, example_rank, int_prop, rebuild, rebuilt, sequential
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results, batched
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.indexing import DynamicUpdateSliceOp, GatherOp, ScatterAddOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import normalize_axis


def to_front(e: Emitter, value: SSAValue, position: int) -> SSAValue:
    """`value` with its dim `position` moved in front (the batch axis of a result)."""
    if position == 0:
        return value
    rank = example_rank(value)
    return e.mir.transpose(value, perm=[position, *(d for d in range(rank) if d != position)])


def swap_front(e: Emitter, value: SSAValue) -> SSAValue:
    """`[N, M, ...]` as `[M, N, ...]`."""
    rank = example_rank(value)
    return e.mir.transpose(value, perm=[1, 0, *range(2, rank)])


@BATCH_RULES.register(GatherOp)
def gather(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """`take(table, indices, axis)`: a batched table gathers along `axis + 1`; batched
    indices put the batch at `axis` in the result (moved in front); both batched pick a
    different table per example, mapped over the batch."""
    table_b, indices_b = args.batched
    axis = normalize_axis(int_prop(op, "axis"), example_rank(op.operands[0]))
    if table_b and indices_b:
        return sequential(e, op, args)
    if table_b:
        return rebuilt(e, op, args.values, axis=axis + 1)
    result = rebuild(e, op, args.values).results[0]
    return batched(to_front(e, result, axis))


@BATCH_RULES.register(ScatterAddOp)
def scatter_add(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """Batched updates `[N, M, ...]` scatter as `[M, N, ...]` rows into `[dim_size, N, ...]`;
    batched indices send each example's rows elsewhere, mapped over the batch."""
    updates, indices = args.values
    if args.batched[1]:
        return sequential(e, op, args)
    result = rebuild(e, op, [swap_front(e, updates), indices]).results[0]
    return batched(swap_front(e, result))


@BATCH_RULES.register(DynamicUpdateSliceOp)
def dynamic_update_slice(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """Operand and update `[N, ...]` (an unbatched one broadcast) and start 0 for the batch
    dim; batched starts write each example elsewhere, mapped over the batch."""
    if any(args.batched[2:]):
        return sequential(e, op, args)
    operand, update = all_batched(e, BatchArgs(args.size, args.values[:2], args.batched[:2]))
    starts = args.values[2:]
    zero = e.mir.constant(0, tensor_type(starts[0]).element_type if starts else "i64")
    return rebuilt(e, op, [operand, update, zero, *starts])
