"""Shape ops: reshape, transpose, narrow, concat, expand."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import shape

JAX_OPS.add(
    shape.ReshapeOp,
    with_op(lambda op, x: jnp.reshape(x, tensor_type(op.result).get_shape())),
)
JAX_OPS.add(
    shape.TransposeOp, with_op(lambda op, x: jnp.transpose(x, op.perm.get_values()))
)
JAX_OPS.add(
    shape.NarrowOp,
    with_op(lambda op, x: jax.lax.slice_in_dim(
        x, op.start.value.data, op.start.value.data + op.len.value.data, axis=op.axis.value.data % x.ndim
    )),
)  # fmt: skip
JAX_OPS.add(
    shape.ConcatOp,
    with_op(lambda op, *xs: jnp.concatenate(xs, axis=op.axis.value.data)),
)
JAX_OPS.add(
    shape.ExpandOp,
    with_op(lambda op, x: jnp.broadcast_to(x, tensor_type(op.result).get_shape())),
)
