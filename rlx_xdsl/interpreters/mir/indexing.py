"""numpy semantics of MIR gather, scatter_add and dynamic_update_slice.

Indices are integers (or RLX's float encoding, truncated toward zero) and are
checked against the table in integers; an index in `[-size, 0)` counts from the
end (numpy, ONNX Gather, PyTorch indexing); `scatter_add` accumulates f16/bf16
updates in f32 and rounds once.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import indexing as ix
from rlx_xdsl.interpreters.common import KernelError, as_result
from rlx_xdsl.numerics import accumulation_dtype, widened


def checked_indices(indices: np.ndarray, size: int, from_the_end: bool = True) -> np.ndarray:
    """`indices` as int64 in `[0, size)`: floats truncated toward zero, then (with
    `from_the_end`) an index in `[-size, 0)` counted from the end (`size` added, as numpy and
    ONNX Gather do). Expert ids (`from_the_end=False`) must lie in `[0, size)`.

    RLX stores ids as f32, so truncation recovers them; an id outside the range is a bug in
    the graph, reported instead of wrapping or clamping.
    """
    # bf16 has numpy kind "V", so test for integers rather than for floats.
    ids = indices if np.issubdtype(indices.dtype, np.integer) else np.trunc(widened(indices).astype(np.float64))
    low = -size if from_the_end else 0
    bad = ~((ids >= low) & (ids < size))  # NaN fails both comparisons
    if bad.any():
        raise KernelError(f"index {indices[bad].flat[0]} is out of range [{low}, {size})")
    ids = ids.astype(np.int64)
    return np.where(ids < 0, ids + size, ids)


def run_gather(op: ix.GatherOp, table: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray]:
    axis = op.axis.value.data % table.ndim
    ids = checked_indices(indices, table.shape[axis])
    return (np.take(table, ids, axis=axis),)


def run_scatter_add(op: ix.ScatterAddOp, updates: np.ndarray, indices: np.ndarray) -> tuple[np.ndarray]:
    size = op.dim_size.value.data
    out = np.zeros((size, *updates.shape[1:]), accumulation_dtype(updates.dtype))
    np.add.at(out, checked_indices(indices, size), widened(updates))
    return (as_result(op, out),)


def clamped_starts(shape, part, starts) -> list[int]:
    """Each start clamped into `[0, shape[d] - part[d]]` (StableHLO's rule: the block fits)."""
    return [min(max(int(s), 0), n - k) for n, k, s in zip(shape, part, starts)]


def run_dynamic_update_slice(
    op: ix.DynamicUpdateSliceOp, operand: np.ndarray, update: np.ndarray, *starts: np.ndarray
) -> tuple[np.ndarray]:
    out = operand.copy()
    at = clamped_starts(operand.shape, update.shape, starts)
    out[tuple(slice(s, s + k) for s, k in zip(at, update.shape))] = update
    return (out,)


KERNELS = {
    ix.GatherOp: run_gather,
    ix.ScatterAddOp: run_scatter_add,
    ix.DynamicUpdateSliceOp: run_dynamic_update_slice,
}
