"""JVP rules of matmul, dot_general and the dense solves.

The products are bilinear: `d(a b) = da b + a db`, each term the op itself on a
tangent. A solve `x = A^-1 b` has `dx = A^-1 (db - dA x)` (the implicit
function rule), one more solve with the same matrix.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import add_tangents
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import apply_to, bilinear
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp, DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.ir.emitter import Emitter

JVP_RULES.register(MatmulOp, DotGeneralOp)(bilinear)


def _solve(e: Emitter, op: DenseSolveOp | BatchedDenseSolveOp, tangents: Tangents, batched: bool) -> OutTangents:
    t_matrix, t_rhs = tangents
    x = op.result
    moved = None
    if t_matrix is not None:
        n = 1 if batched else 0
        moved = e.mir.neg(
            e.mir.dot_general(
                t_matrix, x, lhs_contracting=[n + 1], rhs_contracting=[n],
                lhs_batch=[0] if batched else [], rhs_batch=[0] if batched else [],
            )
        )  # fmt: skip
    rhs = add_tangents(e, t_rhs, moved)
    rhs = rhs if tensor_type(rhs).element_type == tensor_type(x).element_type else e.mir.cast(rhs, tensor_type(x).element_type)
    return apply_to(e, op, [op.matrix, rhs])


@JVP_RULES.register(DenseSolveOp)
def dense_solve(e: Emitter, op: DenseSolveOp, tangents: Tangents) -> OutTangents:
    return _solve(e, op, tangents, batched=False)


@JVP_RULES.register(BatchedDenseSolveOp)
def batched_dense_solve(e: Emitter, op: BatchedDenseSolveOp, tangents: Tangents) -> OutTangents:
    return _solve(e, op, tangents, batched=True)
