"""Kernels with a body: the body evaluated on the inputs (after the matmul, for the epilogue)."""

import jax.numpy as jnp

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, narrow_precision, narrow_product
from rlx_xdsl.dialects.mir import fused_regions as fr


def _epilogue(op: fr.FusedMatmulEpilogueOp, lhs, rhs, *extras, run_block):
    dtype = dtypes.numpy_dtype(op.product_type().element_type)
    lhs, rhs = lhs.astype(dtype), rhs.astype(dtype)
    product = jnp.matmul(lhs, rhs, preferred_element_type=narrow_product(lhs), precision=narrow_precision(lhs))
    product = product.astype(dtype)
    return run_block(op.body.block, (product, *extras))


def _resize(x):
    return jnp.repeat(jnp.repeat(x, 2, axis=2), 2, axis=3)


def _read(op: fr.PrologueMixin, xs: tuple) -> tuple:
    """The body's arguments: the prologue's operand upsampled (XLA fuses the repeat into the kernel)."""
    spec = op.prologue_spec
    if spec is None:
        return xs
    index = spec[1]
    return (*xs[:index], _resize(xs[index]), *xs[index + 1 :])


def _elementwise_region(op: fr.ElementwiseRegionOp, *xs, run_block):
    """The body on the inputs, the prologue's input upsampled."""
    return run_block(op.body.block, _read(op, xs))


def _transform_region(op: fr.TransformRegionOp, x):
    for _ in op.layouts:
        x = _resize(x)
    return (x,)


def _batch_region(op: fr.BatchElementwiseRegionOp, *xs, run_block):
    slices, shared = xs[: len(op.slices)], xs[len(op.slices) :]
    return (jnp.concatenate([run_block(op.body.block, _read(op, (s, *shared)))[0] for s in slices], axis=0),)


JAX_OPS.add(fr.ElementwiseRegionOp, _elementwise_region)
JAX_OPS.add(fr.TransformRegionOp, _transform_region)
JAX_OPS.add(fr.BatchElementwiseRegionOp, _batch_region)
JAX_OPS.add(fr.FusedMatmulEpilogueOp, _epilogue)
