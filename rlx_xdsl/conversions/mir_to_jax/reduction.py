"""Reductions and softmax."""

import math

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.mir import reduction
from rlx_xdsl.dialects.mir.attrs import ReduceKind

_REDUCERS = {
    ReduceKind.SUM: jnp.sum,
    ReduceKind.MEAN: jnp.mean,
    ReduceKind.MAX: jnp.max,
    ReduceKind.MIN: jnp.min,
    ReduceKind.PROD: jnp.prod,
}


def _reduce(op: reduction.ReduceOp, x):
    """The reduction; over zero elements, a max/min (and an integer mean) is the
    interpreter's run-time error, raised when tracing (shapes are static there)."""
    axes = op.normalized_axes()
    kind = op.kind.data
    empty = math.prod(x.shape[a] for a in axes) == 0
    if empty and (kind in (ReduceKind.MAX, ReduceKind.MIN) or (kind == ReduceKind.MEAN and not jnp.issubdtype(x.dtype, jnp.inexact))):
        raise OpError(op, f"{kind.value} over zero elements (axes {list(axes)} of shape {list(x.shape)})")
    return _REDUCERS[kind](x, axis=axes, keepdims=op.keep_dim is not None)


JAX_OPS.add(reduction.ReduceOp, with_op(_reduce))
JAX_OPS.add(
    reduction.SoftmaxOp,
    with_op(lambda op, x: jax.nn.softmax(x, axis=op.axis.value.data)),
)


def cumsum(x, axis: int, exclusive: bool, reverse: bool = False):
    """Running sum along `axis` (from the end when `reverse`); `exclusive` leaves out the element itself."""
    x = widen(x)
    if reverse:
        x = jnp.flip(x, axis)
    total = jnp.cumsum(x, axis=axis, dtype=x.dtype)
    if exclusive:
        zero = jnp.zeros_like(jax.lax.slice_in_dim(x, 0, 1, axis=axis))
        total = jnp.concatenate([zero, jax.lax.slice_in_dim(total, 0, x.shape[axis] - 1, axis=axis)], axis)
    return jnp.flip(total, axis) if reverse else total


JAX_OPS.add(
    reduction.CumsumOp,
    with_op(lambda op, x: cumsum(x, op.normalized_axis(), op.exclusive is not None)),
)


def _topk(op: reduction.TopkOp, x):
    """Sort by (NaN first, value descending, index ascending): NaN is largest, ties keep order."""
    k = op.k.value.data
    if jnp.issubdtype(x.dtype, jnp.floating):
        nan = jnp.isnan(x)
        value = -jnp.where(nan, 0, x + 0).astype(jnp.float64)  # + 0 makes -0.0 equal 0.0
        keys = (jnp.where(nan, 0, 1), value)
    else:
        keys = (jnp.bitwise_not(x.astype(jnp.int64)),) if x.dtype != bool else (~x,)
    iota = jax.lax.broadcasted_iota(jnp.int64, x.shape, x.ndim - 1)
    *_, order = jax.lax.sort((*keys, iota), num_keys=len(keys) + 1)
    indices = order[..., :k]
    return jnp.take_along_axis(x, indices, axis=-1), indices


JAX_OPS.add(reduction.TopkOp, lambda op, x, **_: _topk(op, x))
