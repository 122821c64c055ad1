"""Batching rules of the contractions: matmul broadcasts its batch dims; dot_general
gains a batch dim (or keeps the batch as a free dim, moved in front); solves batch."""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import all_batched, broadcasting, folding, ints_prop, rebuild
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results, batched
from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp, DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of

BATCH_RULES.add(MatmulOp, broadcasting)


def _shifted(dims: list[int]) -> list[int]:
    return [d + 1 for d in dims]


@BATCH_RULES.register(DotGeneralOp)
def dot_general(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    lb, rb = ints_prop(op, "lhs_batch"), ints_prop(op, "rhs_batch")
    lc, rc = ints_prop(op, "lhs_contracting"), ints_prop(op, "rhs_contracting")
    lhs_b, rhs_b = args.batched
    if lhs_b and rhs_b:  # the batch becomes the first batch dim of both sides: result dim 0
        new = rebuild(e, op, args.values, lhs_batch=[0, *_shifted(lb)], rhs_batch=[0, *_shifted(rb)],
                      lhs_contracting=_shifted(lc), rhs_contracting=_shifted(rc))  # fmt: skip
        return batched(new.results[0])
    # One side batched: its batch axis is its first free dim; the result lists batch dims,
    # then lhs free dims, then rhs free dims, so the batch lands after those before it.
    lhs_rank = len(shape_of(op.operands[0].type))
    if lhs_b:
        new = rebuild(e, op, args.values, lhs_batch=_shifted(lb), lhs_contracting=_shifted(lc))
        position = len(lb)
    else:
        new = rebuild(e, op, args.values, rhs_batch=_shifted(rb), rhs_contracting=_shifted(rc))
        position = len(lb) + lhs_rank - len(lb) - len(lc)
    result = new.results[0]
    rank = len(shape_of(result.type))
    if position:
        perm = [position, *(d for d in range(rank) if d != position)]
        result = e.mir.transpose(result, perm=perm)
    return batched(result)


@BATCH_RULES.register(DenseSolveOp)
def dense_solve(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """One system per example: the batched solve on both operands (the shared one broadcast)."""
    matrix, rhs = all_batched(e, args)
    return batched(e.mir.batched_dense_solve(matrix, rhs))


BATCH_RULES.add(BatchedDenseSolveOp, folding(0, 1))
