"""Matrix products and dense solves."""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one
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
