"""MIR linear-algebra ops: matmul, dot_general, dense_solve and batched_dense_solve.

All three are COMPUTE ops for AMP and fusion boundaries. Operand dtypes are
combined with `dtypes.promote`, as for the binary elementwise ops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    fmt_list,
    i64_array,
    refine_dim,
    require,
    require_float,
    require_min_rank,
    require_rank,
    tensor_type,
)
from rlx_xdsl.dialects.traits import COMPUTE
from rlx_xdsl.shapes import (
    ShapeError,
    broadcast_shapes,
    dims_match,
    fmt_dim,
    fmt_shape,
    tensor,
)


@irdl_op_definition
class MatmulOp(RlxOperation):
    """`a[..., M, K] @ b[..., K, N]` with NumPy-broadcast batch dims (`MatMul`)."""

    name = "mir.matmul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$lhs `,` $rhs " + FUNCTIONAL

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        return [matmul_type(self, self.lhs, self.rhs)]


def matmul_type(op: RlxOperation, lhs: SSAValue, rhs: SSAValue, what: tuple[str, str] = ("lhs", "rhs")) -> TensorType:
    """The type of `lhs @ rhs` under `mir.matmul`'s rule, with errors worded for `op`.

    Fused ops that start with a matmul (`mir.fused_matmul_bias_act`, ...) share
    the rule; `what` names their operands in messages.
    """
    a, b = tensor_type(lhs), tensor_type(rhs)
    require_min_rank(op, a, 2, what[0])
    require_min_rank(op, b, 2, what[1])
    *a_batch, m, k_a = a.get_shape()
    *b_batch, k_b, n = b.get_shape()
    require(dims_match(k_a, k_b), op, lambda: f"contraction dims {fmt_dim(k_a)} and {fmt_dim(k_b)} differ")
    try:
        batch = broadcast_shapes(a_batch, b_batch)
    except ShapeError:
        message = f"batch dims {fmt_shape(a_batch)} and {fmt_shape(b_batch)} do not broadcast"
        raise ShapeError(message) from None
    return tensor(dtypes.promote(a.element_type, b.element_type), [*batch, m, n])


@irdl_op_definition
class DotGeneralOp(RlxOperation):
    """A general tensor contraction with XLA `DotGeneral` semantics.

    Result dims are the batch dims, then lhs's remaining (free) dims in order,
    then rhs's free dims in order.
    """

    name = "mir.dot_general"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    lhs_contracting = prop_def(I64_ARRAY)
    rhs_contracting = prop_def(I64_ARRAY)
    lhs_batch = prop_def(I64_ARRAY)
    rhs_batch = prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = (
        "$lhs `,` $rhs `lhs_contracting` `=` $lhs_contracting `rhs_contracting` `=` $rhs_contracting "
        "`lhs_batch` `=` $lhs_batch `rhs_batch` `=` $rhs_batch " + FUNCTIONAL
    )

    def __init__(
        self,
        lhs: SSAValue,
        rhs: SSAValue,
        *,
        lhs_contracting: Sequence[int],
        rhs_contracting: Sequence[int],
        lhs_batch: Sequence[int] = (),
        rhs_batch: Sequence[int] = (),
    ):
        super().__init__(
            operands=[lhs, rhs],
            properties={
                "lhs_contracting": i64_array(lhs_contracting),
                "rhs_contracting": i64_array(rhs_contracting),
                "lhs_batch": i64_array(lhs_batch),
                "rhs_batch": i64_array(rhs_batch),
            },
        )

    def axis_lists(self) -> tuple[tuple[int, ...], ...]:
        """`(lhs_contracting, rhs_contracting, lhs_batch, rhs_batch)` as int tuples."""
        props = (self.lhs_contracting, self.rhs_contracting, self.lhs_batch, self.rhs_batch)
        return tuple(p.get_values() for p in props)

    def check_attributes(self) -> None:
        lc, rc, lb, rb = self.axis_lists()
        for kind, l_axes, r_axes in (("contracting", lc, rc), ("batch", lb, rb)):
            require(
                len(l_axes) == len(r_axes),
                self,
                lambda: f"lhs_{kind} {fmt_list(l_axes)} and rhs_{kind} {fmt_list(r_axes)} differ in length",
            )
        for side, axes in (("lhs", lb + lc), ("rhs", rb + rc)):
            require(len(set(axes)) == len(axes), self, lambda: f"{side} batch and contracting axes repeat an axis")

    def infer_result_types(self) -> Sequence[Attribute]:
        a, b = tensor_type(self.lhs), tensor_type(self.rhs)
        lc, rc, lb, rb = self.axis_lists()
        a_shape, b_shape = a.get_shape(), b.get_shape()
        for side, shape, axes in (("lhs", a_shape, lb + lc), ("rhs", b_shape, rb + rc)):
            rank = len(shape)
            for axis in axes:
                require(0 <= axis < rank, self, lambda: f"{side} axis {axis} is out of range for rank {rank}")
        for kind, l_axes, r_axes in (("contracting", lc, rc), ("batch", lb, rb)):
            for i, j in zip(l_axes, r_axes):
                require(
                    dims_match(a_shape[i], b_shape[j]),
                    self,
                    lambda: f"{kind} dims lhs[{i}] = {fmt_dim(a_shape[i])} and rhs[{j}] = {fmt_dim(b_shape[j])} differ",
                )
        batch = [refine_dim(a_shape[i], b_shape[j]) for i, j in zip(lb, rb)]
        lhs_free = [d for i, d in enumerate(a_shape) if i not in lb + lc]
        rhs_free = [d for j, d in enumerate(b_shape) if j not in rb + rc]
        return [tensor(dtypes.promote(a.element_type, b.element_type), batch + lhs_free + rhs_free)]


@irdl_op_definition
class DenseSolveOp(RlxOperation):
    """Solves `A x = b` for a square `A[N, N]` and `b[N]` or `b[N, K]` (`DenseSolve`)."""

    name = "mir.dense_solve"
    matrix = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$matrix `,` $rhs " + FUNCTIONAL

    def __init__(self, matrix: SSAValue, rhs: SSAValue):
        super().__init__(operands=[matrix, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        return [solve_type(self, batch_rank=0)]


@irdl_op_definition
class BatchedDenseSolveOp(RlxOperation):
    """Solves `A[i] x[i] = b[i]` for each of `B` square systems (`BatchedDenseSolve`):
    `A[B, N, N]` with `b[B, N]` or `b[B, N, K]`; the result has b's shape."""

    name = "mir.batched_dense_solve"
    matrix = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$matrix `,` $rhs " + FUNCTIONAL

    def __init__(self, matrix: SSAValue, rhs: SSAValue):
        super().__init__(operands=[matrix, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        return [solve_type(self, batch_rank=1)]


def solve_type(op: DenseSolveOp | BatchedDenseSolveOp, batch_rank: int) -> TensorType:
    """The result type of `A x = b` over `batch_rank` leading batch dims: b's shape, the
    operands' promoted dtype. One check list for the single and the batched solve."""
    a, b = tensor_type(op.matrix), tensor_type(op.rhs)
    require_float(op, a, "matrix")
    require_float(op, b, "rhs")
    require_rank(op, a, batch_rank + 2, "matrix")
    require_rank(op, b, (batch_rank + 1, batch_rank + 2), "rhs")
    matrices, have = ("matrices", "have") if batch_rank else ("matrix", "has")
    *batch, rows, cols = a.get_shape()
    require(dims_match(rows, cols), op, lambda: f"{matrices} must be square, got {fmt_shape(a.get_shape())}")
    size = refine_dim(rows, cols)
    b_batch, (n, *k) = b.get_shape()[:batch_rank], b.get_shape()[batch_rank:]
    for got, want in zip(b_batch, batch):
        require(dims_match(got, want), op, lambda: f"rhs has batch {fmt_dim(got)} but the matrix has {fmt_dim(want)}")
    require(dims_match(n, size), op, lambda: f"rhs has {fmt_dim(n)} rows but the {matrices} {have} {fmt_dim(size)}")
    shape = [*(refine_dim(g, w) for g, w in zip(b_batch, batch)), refine_dim(n, size), *k]
    return tensor(dtypes.promote(a.element_type, b.element_type), shape)


OPS = [MatmulOp, DotGeneralOp, DenseSolveOp, BatchedDenseSolveOp]
ATTRIBUTES: list[type] = []
