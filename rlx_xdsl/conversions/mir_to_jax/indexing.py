"""Indexing ops: gather and scatter_add (float indices truncate toward zero; one in
`[-n, 0)` counts from the end, as in the interpreter); dynamic_update_slice is
`lax.dynamic_update_slice`, which clamps the starts as the op does."""

import jax.numpy as jnp
from jax import lax

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, result_dtype, widen, with_op
from rlx_xdsl.dialects.mir import indexing


def ids(indices, size: int):
    """Integer indices into `size` slices (floats truncate toward zero), `size` added to
    a negative one: the op's rule, not left to `jnp.take`'s or XLA's handling."""
    whole = indices.astype(jnp.int32)
    return jnp.where(whole < 0, whole + size, whole)


def scatter_rows(updates, indices, dim_size: int, axis: int = 0):
    """`dim_size` zero slices along `axis` with `updates`' slices added at `indices` (any rank)."""
    moved = jnp.moveaxis(widen(updates), list(range(axis, axis + indices.ndim)), list(range(indices.ndim)))
    rows = moved.reshape(-1, *moved.shape[indices.ndim :])
    out = jnp.zeros((dim_size, *rows.shape[1:]), rows.dtype).at[ids(indices, dim_size).reshape(-1)].add(rows)
    return jnp.moveaxis(out, 0, axis)


JAX_OPS.add(
    indexing.GatherOp,
    with_op(lambda op, t, i: jnp.take(t, ids(i, t.shape[op.axis.value.data]), axis=op.axis.value.data)),
)
JAX_OPS.add(
    indexing.ScatterAddOp,
    with_op(lambda op, u, i: scatter_rows(u.astype(result_dtype(op)), i, op.dim_size.value.data)),
)
JAX_OPS.add(
    indexing.DynamicUpdateSliceOp,
    with_op(lambda op, x, u, *starts: lax.dynamic_update_slice(x, u, [s.astype(jnp.result_type(*starts)) for s in starts])),
)
