"""Matrix products and dense solves."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, with_op
from rlx_xdsl.dialects.mir import contraction

JAX_OPS.add(contraction.MatmulOp, one(jnp.matmul))
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
JAX_OPS.add(
    contraction.DotGeneralOp,
    with_op(lambda op, a, b: jax.lax.dot_general(a, b, (
        (op.lhs_contracting.get_values(), op.rhs_contracting.get_values()),
        (op.lhs_batch.get_values(), op.rhs_batch.get_values()),
    ))),
)  # fmt: skip
