"""numpy semantics of MIR gather and scatter_add."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import indexing as ix


def checked_indices(indices: np.ndarray, size: int, op_name: str) -> np.ndarray:
    """`indices` as int64, floats truncated toward zero; each must lie in `[0, size)`.

    RLX stores ids as f32, so truncation recovers them; an id outside the
    table is a bug in the graph, reported instead of wrapping or clamping.
    """
    # bf16 has numpy kind "V", so test for integers rather than for floats.
    ids = indices if np.issubdtype(indices.dtype, np.integer) else np.trunc(indices.astype(np.float64))
    bad = ~((ids >= 0) & (ids < size))  # NaN fails both comparisons
    if bad.any():
        raise ValueError(f"'{op_name}' index {indices[bad].flat[0]} is out of range [0, {size})")
    return ids.astype(np.int64)


def run_gather(op: ix.GatherOp, table: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray]:
    axis = op.axis.value.data % table.ndim
    ids = checked_indices(indices, table.shape[axis], op.name)
    return (np.take(table, ids, axis=axis),)


def run_scatter_add(op: ix.ScatterAddOp, updates: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray]:
    size = op.dim_size.value.data
    out = np.zeros((size, *updates.shape[1:]), updates.dtype)
    np.add.at(out, checked_indices(indices, size, op.name), updates)
    return (out,)


KERNELS = {ix.GatherOp: run_gather, ix.ScatterAddOp: run_scatter_add}
