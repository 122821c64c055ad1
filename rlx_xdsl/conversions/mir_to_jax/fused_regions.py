"""Kernels with a body: the body evaluated on the inputs (after the matmul, for the epilogue)."""

import jax.numpy as jnp

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, accumulator
from rlx_xdsl.dialects.mir import fused_regions as fr


def _epilogue(op: fr.FusedMatmulEpilogueOp, lhs, rhs, *extras, run_block):
    dtype = dtypes.numpy_dtype(op.product_type().element_type)
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)
    product = jnp.matmul(lhs, rhs, preferred_element_type=accumulator(lhs)).astype(dtype)
    return run_block(op.body.block, (product, *extras))


JAX_OPS.add(fr.ElementwiseRegionOp, lambda op, *xs, run_block: run_block(op.body.block, xs))
JAX_OPS.add(fr.FusedMatmulEpilogueOp, _epilogue)
