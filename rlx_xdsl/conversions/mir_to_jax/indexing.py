"""Indexing ops: gather."""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import indexing

JAX_OPS.add(
    indexing.GatherOp,
    with_op(lambda op, t, i: jnp.take(t, i.astype(jnp.int32), axis=op.axis.value.data)),
)
