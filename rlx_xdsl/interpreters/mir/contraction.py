"""numpy semantics of MIR contractions: matmul, dot_general, dense_solve, batched_dense_solve.

Products accumulate f16/bf16 in f32 (`numerics.accumulate_matmul`) and integers
in their own dtype (wrapping), then round once to the result dtype.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from rlx_xdsl.dialects.mir import contraction as ct
from rlx_xdsl.interpreters.common import KernelError, as_result, promoted, result_dtype
from rlx_xdsl.numerics import accumulate_matmul


def dot_general(
    a: np.ndarray,
    b: np.ndarray,
    lhs_contracting: Sequence[int],
    rhs_contracting: Sequence[int],
    lhs_batch: Sequence[int],
    rhs_batch: Sequence[int],
) -> np.ndarray:
    """Contract by moving axes into `[batch, free, contracting]` blocks and one batched matmul."""
    lhs_free = [i for i in range(a.ndim) if i not in (*lhs_batch, *lhs_contracting)]
    rhs_free = [i for i in range(b.ndim) if i not in (*rhs_batch, *rhs_contracting)]
    batch_shape = [a.shape[i] for i in lhs_batch]
    lhs_free_shape = [a.shape[i] for i in lhs_free]
    rhs_free_shape = [b.shape[i] for i in rhs_free]
    batch = math.prod(batch_shape)
    contracted = math.prod(a.shape[i] for i in lhs_contracting)
    a3 = a.transpose([*lhs_batch, *lhs_free, *lhs_contracting])
    b3 = b.transpose([*rhs_batch, *rhs_contracting, *rhs_free])
    a3 = a3.reshape(batch, math.prod(lhs_free_shape), contracted)
    b3 = b3.reshape(batch, contracted, math.prod(rhs_free_shape))
    return accumulate_matmul(a3, b3).reshape(batch_shape + lhs_free_shape + rhs_free_shape)


def run_matmul(op: ct.MatmulOp, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    a, b = promoted(lhs, rhs)
    return (as_result(op, accumulate_matmul(a, b)),)


def run_dot_general(op: ct.DotGeneralOp, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    a, b = promoted(lhs, rhs)
    return (as_result(op, dot_general(a, b, *op.axis_lists())),)


def solve(op: ct.DenseSolveOp | ct.BatchedDenseSolveOp, matrix: np.ndarray, rhs: np.ndarray) -> np.ndarray:
    """`np.linalg.solve` in the result dtype; numpy's LAPACK solver has no half-precision
    kernels, so those solve in f32."""
    work = result_dtype(op) if result_dtype(op) in (np.float32, np.float64) else np.dtype(np.float32)
    try:
        return np.linalg.solve(matrix.astype(work), rhs.astype(work))
    except np.linalg.LinAlgError as e:
        raise KernelError("matrix is singular") from e


def run_dense_solve(op: ct.DenseSolveOp, matrix: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    return (as_result(op, solve(op, matrix, rhs)),)


def run_batched_dense_solve(op: ct.BatchedDenseSolveOp, matrix: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    """A vector rhs `[B, N]` is solved as `[B, N, 1]` (numpy reads rank >= 2 as matrices)."""
    if rhs.ndim == 2:
        return (as_result(op, solve(op, matrix, rhs[..., None])[..., 0]),)
    return (as_result(op, solve(op, matrix, rhs)),)


KERNELS = {
    ct.MatmulOp: run_matmul,
    ct.DotGeneralOp: run_dot_general,
    ct.DenseSolveOp: run_dense_solve,
    ct.BatchedDenseSolveOp: run_batched_dense_solve,
}
