"""Convolution and pooling."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import conv as conv_ops
from rlx_xdsl.dialects.mir.attrs import ReduceKind


def conv(op, x, w):
    """`op`'s convolution (NCHW, OIHW weights); `op` gives the window properties."""
    pads = [(p, p) for p in op.pair("padding")]
    return jax.lax.conv_general_dilated(
        x, w, window_strides=op.pair("stride"), padding=pads, rhs_dilation=op.pair("dilation"),
        feature_group_count=op.groups.value.data, dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )  # fmt: skip


def pool(op, x):
    """`op`'s max or mean pooling (padded cells are not counted by the mean)."""
    window = (1, 1, *op.pair("kernel_size"))
    strides = (1, 1, *op.pair("stride"))
    pads = ((0, 0), (0, 0), *((p, p) for p in op.pair("padding")))
    if op.kind.data == ReduceKind.MAX:
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, pads)
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, pads)
    count = jax.lax.reduce_window(
        jnp.ones_like(x), 0.0, jax.lax.add, window, strides, pads
    )
    return total / count  # padded cells are not counted


JAX_OPS.add(conv_ops.ConvOp, with_op(conv))
JAX_OPS.add(conv_ops.PoolOp, with_op(pool))
