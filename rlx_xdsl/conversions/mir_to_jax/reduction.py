"""Reductions and softmax."""

import math

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.elementwise import divide, multiply
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.dialects.mir import reduction
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.ir.diagnostics import OpError

_REDUCERS = {
    ReduceKind.SUM: jnp.sum,
    ReduceKind.MEAN: jnp.mean,
    ReduceKind.MAX: jnp.max,
    ReduceKind.MIN: jnp.min,
    ReduceKind.PROD: jnp.prod,
}


def _reduce(op: reduction.ReduceOp, x):
    """An integer mean sums in i64 and truncates (`jnp.mean` would divide in floats); a
    max/min or integer mean of zero elements is a located error, as on IREE."""
    if (refusal := op.zero_size_refusal()) is not None:
        raise OpError(op, f"'{op.name}' {refusal}")
    axes, keepdims = op.normalized_axes(), op.keep_dim is not None
    if op.kind.data == ReduceKind.MEAN and not jnp.issubdtype(x.dtype, jnp.inexact):
        count = math.prod(x.shape[a] for a in axes)
        return divide(jnp.sum(x.astype(jnp.int64), axis=axes, keepdims=keepdims), jnp.int64(count))
    if op.kind.data == ReduceKind.PROD and jnp.iscomplexobj(x):  # with `multiply`'s rounding
        product = jax.lax.reduce(x, jnp.ones((), x.dtype), multiply, axes)
        return jnp.expand_dims(product, axes) if keepdims else product
    return _REDUCERS[op.kind.data](x, axis=axes, keepdims=keepdims)


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
