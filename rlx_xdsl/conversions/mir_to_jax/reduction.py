"""Reductions and softmax."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import reduction
from rlx_xdsl.dialects.mir.attrs import ReduceKind

_REDUCERS = {
    ReduceKind.SUM: jnp.sum,
    ReduceKind.MEAN: jnp.mean,
    ReduceKind.MAX: jnp.max,
    ReduceKind.MIN: jnp.min,
    ReduceKind.PROD: jnp.prod,
}
JAX_OPS.add(
    reduction.ReduceOp,
    with_op(
        lambda op, x: _REDUCERS[op.kind.data](
            x, axis=op.normalized_axes(), keepdims=op.keep_dim is not None
        )
    ),
)
JAX_OPS.add(
    reduction.SoftmaxOp,
    with_op(lambda op, x: jax.nn.softmax(x, axis=op.axis.value.data)),
)
