"""Shape ops: reshape, transpose, narrow, concat, expand."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.base import like_at_run_time
from rlx_xdsl.dialects.mir import shape
from rlx_xdsl.shapes import sized_like


def _expand(op: shape.ExpandOp, x, like=None):
    """`numpy.broadcast_to` of `target_shape`, whose -1 keeps x's dim (or takes `like`'s)."""
    target = sized_like(op.target_shape.get_values(), *like_at_run_time(op, like))
    offset = len(target) - x.ndim
    return jnp.broadcast_to(x, [x.shape[i - offset] if t == -1 else t for i, t in enumerate(target)])


def _narrow_len(op: shape.NarrowOp, x, like=None) -> int:
    """`len`, or the size `like` gives the narrowed axis."""
    return sized_like([op.len.value.data] * x.ndim, *like_at_run_time(op, like))[op.axis.value.data % x.ndim]


JAX_OPS.add(
    shape.ReshapeOp,
    with_op(lambda op, x, like=None: jnp.reshape(x, sized_like(op.new_shape.get_values(), *like_at_run_time(op, like)))),
)
JAX_OPS.add(
    shape.TransposeOp, with_op(lambda op, x: jnp.transpose(x, op.perm.get_values()))
)
JAX_OPS.add(
    shape.NarrowOp,
    with_op(lambda op, x, like=None: jax.lax.slice_in_dim(
        x, op.start.value.data, op.start.value.data + _narrow_len(op, x, like), axis=op.axis.value.data % x.ndim
    )),
)  # fmt: skip
JAX_OPS.add(
    shape.ConcatOp,
    with_op(lambda op, *xs: jnp.concatenate(xs, axis=op.axis.value.data)),
)
JAX_OPS.add(
    shape.ExpandOp,
    with_op(_expand),
)
