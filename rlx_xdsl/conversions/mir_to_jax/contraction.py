"""Matrix products and dense solves."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import (
    JAX_OPS,
    narrow_precision,
    narrow_product,
    one,
    result_dtype,
    with_op,
)
from rlx_xdsl.dialects.mir import contraction


def _matmul(op: contraction.MatmulOp, a, b):
    """In the result dtype; f16/bf16 products accumulate in f32 and round once."""
    a, b = a.astype(result_dtype(op)), b.astype(result_dtype(op))
    return jnp.matmul(a, b, preferred_element_type=narrow_product(a), precision=narrow_precision(a))


JAX_OPS.add(contraction.MatmulOp, with_op(_matmul))
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
    """`lax.dot_general`: batch dims, then lhs's free dims, then rhs's (XLA's order). Sums start
    at +0 as the interpreter's do: a zero result is never -0."""
    dtype = result_dtype(op)
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)
    dims = (
        (op.lhs_contracting.get_values(), op.rhs_contracting.get_values()),
        (op.lhs_batch.get_values(), op.rhs_batch.get_values()),
    )
    out = jax.lax.dot_general(
        lhs, rhs, dims, preferred_element_type=narrow_product(lhs), precision=narrow_precision(lhs)
    )
    if not dims[0][0] and jnp.issubdtype(out.dtype, jnp.floating):
        # An outer product: XLA returns each product as is, where the interpreter's sum
        # (like IREE's) starts at +0, so a -0 product is +0.
        out = jnp.where(out == 0, jnp.zeros_like(out), out)
    return out


JAX_OPS.add(contraction.DotGeneralOp, with_op(_dot_general))
