"""Lowering of MIR contractions: matmul and dot_general as one contraction each
(`linalg.matmul` for a plain 2-D product, `linalg.generic` otherwise), and
dense_solve as Gauss-Jordan elimination with partial pivoting in an `scf.for` (batched_dense_solve:
the same inside a loop over the batch).

f16/bf16 products accumulate in f32 and are rounded once at the end, as the
interpreter's `np.matmul` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import scf, tensor
from xdsl.dialects.builtin import IndexType
from xdsl.dialects.linalg.ops import MatmulOp
from xdsl.ir import Block, Region, SSAValue
from xdsl.ir.affine import AffineMap

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import I64, Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import (
    PARALLEL,
    Dim,
    Tensors,
    element_type,
    identity,
    loops,
)
from rlx_xdsl.dialects.mir import contraction as ct
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.emitter import Emitter


def contract(
    lw: Tensors,
    operands: Sequence[tuple[SSAValue, DType, Sequence[int | None] | AffineMap]],
    loop_dims: Sequence[Dim],
    reduced: Sequence[int],
    out_dt: DType,
) -> SSAValue:
    """`out[kept loops] = sum over reduced loops of the product of the operands`.

    Each operand comes with its dtype and the loop indexing each of its dims
    (None: a broadcast dim of size 1), or its indexing map. The product is taken in `out_dt`'s
    accumulator dtype and rounded to `out_dt` at the end.
    """
    acc = accumulator(out_dt)
    n = len(loop_dims)

    def body(s: Scalars, *args: SSAValue) -> SSAValue:
        *elements, total = args
        product = None
        for x, (_, dt, _) in zip(elements, operands):
            x = s.cast(x, dt, acc)
            product = x if product is None else s.mul(product, x, acc)
        return s.add(total, product, acc)

    inputs = [(v, dims if isinstance(dims, AffineMap) else loops(n, dims)) for v, _, dims in operands]
    result = lw.reduce(inputs, loop_dims, reduced, acc, False if acc.kind == "bool" else 0, body)
    return lw.convert(result, acc, out_dt)


def _batch_loops(batch: Sequence[int], out_batch: Sequence[int]) -> list[int | None]:
    """Loops of an operand's batch dims broadcast to `out_batch` (aligned at the end)."""
    lead = len(out_batch) - len(batch)
    return [None if d == 1 and out_batch[lead + k] != 1 else lead + k for k, d in enumerate(batch)]


def _is_plain_2d(lw: Lowering, lhs: SSAValue, rhs: SSAValue) -> bool:
    """A product `linalg.matmul` computes exactly: 2-D, one float dtype, no widening."""
    dt = lw.result_dtype()
    same = lw.operand_dtype(0) == lw.operand_dtype(1) == dt
    return same and dt.name in ("f32", "f64") and lhs.type.get_num_dims() == rhs.type.get_num_dims() == 2


@LOWERINGS.register(ct.MatmulOp)
def lower_matmul(lw: Lowering, op: ct.MatmulOp) -> Sequence[SSAValue]:
    a, b = op.lhs, op.rhs
    a_dims, b_dims = lw.dims(a), lw.dims(b)
    *a_batch, m, k = a_dims
    *b_batch, _, n = b_dims
    out_dims = [*lw.broadcast_dim_lists(a_batch, b_batch), m, n]
    if _is_plain_2d(lw, a, b):
        init = lw.full(out_dims, lw.result_dtype(), 0)
        return [lw.emit(MatmulOp([a, b], [init]))]
    out_batch = op.result.type.get_shape()[:-2]
    nb = len(out_batch)
    a_loops = [*_batch_loops(a.type.get_shape()[:-2], out_batch), nb, nb + 2]
    b_loops = [*_batch_loops(b.type.get_shape()[:-2], out_batch), nb + 2, nb + 1]
    operands = [(a, lw.operand_dtype(0), a_loops), (b, lw.operand_dtype(1), b_loops)]
    return [contract(lw, operands, [*out_dims, k], [nb + 2], lw.result_dtype())]


@LOWERINGS.register(ct.DotGeneralOp)
def lower_dot_general(lw: Lowering, op: ct.DotGeneralOp) -> Sequence[SSAValue]:
    """Loops: batch dims, lhs free dims, rhs free dims, then the contracted dims."""
    lc, rc, lb, rb = op.axis_lists()
    a_dims, b_dims = lw.dims(op.lhs), lw.dims(op.rhs)
    lhs_free = [i for i in range(len(a_dims)) if i not in (*lb, *lc)]
    rhs_free = [j for j in range(len(b_dims)) if j not in (*rb, *rc)]
    nb, nl, nr = len(lb), len(lhs_free), len(rhs_free)
    a_loops = [0] * len(a_dims)
    b_loops = [0] * len(b_dims)
    for p, (i, j) in enumerate(zip(lb, rb)):
        a_loops[i] = b_loops[j] = p
    for p, i in enumerate(lhs_free):
        a_loops[i] = nb + p
    for p, j in enumerate(rhs_free):
        b_loops[j] = nb + nl + p
    for p, (i, j) in enumerate(zip(lc, rc)):
        a_loops[i] = b_loops[j] = nb + nl + nr + p
    loop_dims = [
        *(_known(a_dims[i], b_dims[j]) for i, j in zip(lb, rb)),
        *(a_dims[i] for i in lhs_free),
        *(b_dims[j] for j in rhs_free),
        *(_known(a_dims[i], b_dims[j]) for i, j in zip(lc, rc)),
    ]
    operands = [(op.lhs, lw.operand_dtype(0), a_loops), (op.rhs, lw.operand_dtype(1), b_loops)]
    reduced = list(range(nb + nl + nr, len(loop_dims)))
    return [contract(lw, operands, loop_dims, reduced, lw.result_dtype())]


def _known(a: Dim, b: Dim) -> Dim:
    """Of two sizes that must agree, the static one if any."""
    return a if isinstance(a, int) else b


# dense_solve ----------------------------------------------------------------------


@LOWERINGS.register(ct.DenseSolveOp)
def lower_dense_solve(lw: Lowering, op: ct.DenseSolveOp) -> Sequence[SSAValue]:
    """Gauss-Jordan elimination (`solve`) in the accumulation dtype, rounded once."""
    out_dt = lw.result_dtype()
    work = accumulator(out_dt)
    a = lw.convert(op.matrix, lw.operand_dtype(0), work)
    b = lw.convert(op.rhs, lw.operand_dtype(1), work)
    return [lw.convert(solve(lw, a, b, work), work, out_dt)]


@LOWERINGS.register(ct.BatchedDenseSolveOp)
def lower_batched_dense_solve(lw: Lowering, op: ct.BatchedDenseSolveOp) -> Sequence[SSAValue]:
    """`solve` on each system in an outer `scf.for` over the batch, writing row i of the result."""
    out_dt = lw.result_dtype()
    work = accumulator(out_dt)
    a = lw.convert(op.matrix, lw.operand_dtype(0), work)
    b = lw.convert(op.rhs, lw.operand_dtype(1), work)
    result = lw.empty(lw.dims(b), work)
    body = Block(arg_types=[IndexType(), result.type])
    i, x_i = body.args
    step = Tensors(Emitter.at_end(body, lw.e.location))
    x = step.insert_row(solve(step, step.row(a, i), step.row(b, i), work), x_i, i)
    body.add_op(scf.YieldOp(x))
    batch = lw.index_value(lw.dim(a, 0))
    loop = scf.ForOp(lw.s.index_constant(0), batch, lw.s.index_constant(1), [result], Region(body))
    lw.e.insert(loop)
    return [lw.convert(loop.results[0], work, out_dt)]


def solve(lw: Tensors, a: SSAValue, b: SSAValue, work: DType) -> SSAValue:
    """`x` with `a x = b` for `a[N, N]` and `b[N]` or `b[N, K]` in `work`: Gauss-Jordan
    elimination with partial pivoting, one `scf.for` step per column.

    Step k swaps the row with the largest |a[i, k]| (i >= k) into row k, scales it
    so the pivot is 1 and subtracts it from every other row, in `a` and in `b`.
    After the last step `a` is the identity and `b` holds the solution. f16/bf16
    solve in f32 (as the interpreter); a singular matrix gives inf/NaN.
    """
    vector = b.type.get_num_dims() == 1
    if vector:
        b = lw.expand(b, [[0, 1]], [lw.dim(b, 0), 1])
    n = lw.index_value(lw.dim(a, 0))
    body = Block(arg_types=[IndexType(), a.type, b.type])
    k, a_k, b_k = body.args
    step = Tensors(Emitter.at_end(body, lw.e.location))
    a_next, b_next = _eliminate(step, k, a_k, b_k, work)
    body.add_op(scf.YieldOp(a_next, b_next))
    loop = scf.ForOp(lw.s.index_constant(0), n, lw.s.index_constant(1), [a, b], Region(body))
    lw.e.insert(loop)
    x = loop.results[1]
    return lw.collapse(x, [[0, 1]]) if vector else x


def _eliminate(lw: Tensors, k: SSAValue, a_k: SSAValue, b_k: SSAValue, dt: DType) -> tuple[SSAValue, SSAValue]:
    """One Gauss-Jordan step on column `k` of `a_k` (and the same row operations on `b_k`),
    written over them, the loop's carried tensors (as one-shot bufferization requires)."""
    pivot_row = _pivot_row(lw, k, a_k, dt)
    a = _swap_rows(lw, a_k, k, pivot_row, dt)
    b = _swap_rows(lw, b_k, k, pivot_row, dt)

    def update(target: SSAValue, into: SSAValue) -> SSAValue:
        """Row k divided by the pivot; other rows minus a[i, k] / pivot times that row."""

        def body(s: Scalars, x: SSAValue, _: SSAValue) -> SSAValue:
            i, j = s.loop_index(0), s.loop_index(1)
            pivot = s.emit(tensor.ExtractOp(a, [k, k], element_type(a)))
            scaled_row_k = s.div(s.emit(tensor.ExtractOp(target, [k, j], element_type(target))), pivot, dt)
            factor = s.emit(tensor.ExtractOp(a, [i, k], element_type(a)))
            on_pivot_row = s.index_compare("eq", i, k)
            return s.select(on_pivot_row, scaled_row_k, s.sub(x, s.mul(factor, scaled_row_k, dt), dt))

        return lw.map_elements([target], lw.dims(target), dt, body, into=into)

    return update(a, a_k), update(b, b_k)


def _pivot_row(lw: Tensors, k: SSAValue, a: SSAValue, dt: DType) -> SSAValue:
    """The first row i >= k with the largest |a[i, k]|, as an index (two reductions:
    the largest size, then the first row that has it)."""
    n = lw.dim(a, 0)
    column = lw.collapse(lw.extract_slice(a, [0, k], [n, 1]), [[0, 1]])
    scalar = loops(1, [])

    def size_below_k(s: Scalars, x: SSAValue) -> SSAValue:
        eligible = s.index_compare("ge", s.loop_index(0), k)
        return s.select(eligible, s.abs(x, dt), s.constant(-1, dt))

    largest = lw.reduce(
        [(column, identity(1))], [n], [0], dt, -1, lambda s, x, best: s.max(best, size_below_k(s, x), dt)
    )

    def first_row(s: Scalars, x: SSAValue, best: SSAValue, row: SSAValue) -> SSAValue:
        i = s.from_index(s.loop_index(0), I64)
        hit = s.compare("eq", size_below_k(s, x), best, dt)
        return s.min(row, s.select(hit, i, s.constant(2**62, I64)), I64)

    row = lw.reduce([(column, identity(1)), (largest, scalar)], [n], [0], I64, 2**62, first_row)
    return lw.s.to_index(lw.extract_scalar(row), I64)


def _swap_rows(lw: Tensors, x: SSAValue, k: SSAValue, p: SSAValue, dt: DType) -> SSAValue:
    """`x` with rows k and p exchanged: each row is read through the transposition."""

    def body(s: Scalars, _: SSAValue) -> SSAValue:
        i, j = s.loop_index(0), s.loop_index(1)
        source = s.select(s.index_compare("eq", i, k), p, s.select(s.index_compare("eq", i, p), k, i))
        return s.emit(tensor.ExtractOp(x, [source, j], element_type(x)))

    init = lw.empty(lw.dims(x), dt)
    return lw.generic([], [(init, identity(2))], [PARALLEL, PARALLEL], body)[0]
