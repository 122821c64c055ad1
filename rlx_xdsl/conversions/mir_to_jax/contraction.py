"""Matrix products and dense solves."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, result_dtype, widen, with_op
from rlx_xdsl.dialects.mir import contraction

JAX_OPS.add(
    contraction.MatmulOp,
    with_op(lambda op, a, b: jnp.matmul(widen(a.astype(result_dtype(op))), widen(b.astype(result_dtype(op))))),
)
JAX_OPS.add(contraction.DenseSolveOp, one(jnp.linalg.solve))
JAX_OPS.add(
    contraction.BatchedDenseSolveOp,
    one(
        lambda a, b: (
            jnp.linalg.solve(a, b[..., None])[..., 0]
            if b.ndim == 2
            else jnp.linalg.solve(a, b)
        )
    ),
)


def _dot_general(op: contraction.DotGeneralOp, lhs, rhs):
    """`lax.dot_general`: batch dims, then lhs's free dims, then rhs's (XLA's order)."""
    dtype = result_dtype(op)
    lhs, rhs = widen(lhs.astype(dtype)), widen(rhs.astype(dtype))
    dims = (
        (op.lhs_contracting.get_values(), op.rhs_contracting.get_values()),
        (op.lhs_batch.get_values(), op.rhs_batch.get_values()),
    )
    return jax.lax.dot_general(lhs, rhs, dims)


JAX_OPS.add(contraction.DotGeneralOp, with_op(_dot_general))
