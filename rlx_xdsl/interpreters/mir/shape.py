"""numpy semantics of MIR shape and data-movement ops."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.base import like_at_run_time
from rlx_xdsl.dialects.mir import shape as sh
from rlx_xdsl.interpreters.common import KernelError
from rlx_xdsl.shapes import sized_like


def narrow(x: np.ndarray, axis: int, start: int, length: int) -> np.ndarray:
    """`x[..., start:start + length, ...]` on `axis`; a slice past the end is an error.

    numpy would silently shorten such a slice; the verifier can only rule it
    out for static dims, so dynamic inputs are checked here.
    """
    axis %= x.ndim
    if start + length > x.shape[axis]:
        dim = x.shape[axis]
        raise KernelError(f"start {start} + len {length} exceeds dim {dim} of axis {axis}")
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, start + length)
    return x[tuple(index)]


def expand(x: np.ndarray, target_shape: tuple[int, ...]) -> np.ndarray:
    """`numpy.broadcast_to` with -1 keeping the aligned input dim, copied to a fresh array."""
    lead = len(target_shape) - x.ndim
    shape = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(target_shape)]
    return np.array(np.broadcast_to(x, shape))


def run_reshape(op: sh.ReshapeOp, x: np.ndarray, like: np.ndarray | None = None) -> tuple[np.ndarray]:
    shape = sized_like(op.new_shape.get_values(), *like_at_run_time(op, like))
    try:
        return (x.reshape(shape),)
    except ValueError:
        raise KernelError(f"cannot reshape {list(x.shape)} to {list(shape)}") from None


def run_transpose(op: sh.TransposeOp, x: np.ndarray) -> tuple[np.ndarray]:
    return (x.transpose(op.perm.get_values()),)


def run_narrow(op: sh.NarrowOp, x: np.ndarray, like: np.ndarray | None = None) -> tuple[np.ndarray]:
    axis = op.axis.value.data % x.ndim
    length = sized_like([op.len.value.data] * x.ndim, *like_at_run_time(op, like))[axis]
    return (narrow(x, axis, op.start.value.data, length),)


def run_concat(op: sh.ConcatOp, *inputs: np.ndarray) -> tuple[np.ndarray]:
    return (np.concatenate(inputs, axis=op.axis.value.data),)


def run_expand(op: sh.ExpandOp, x: np.ndarray, like: np.ndarray | None = None) -> tuple[np.ndarray]:
    return (expand(x, sized_like(op.target_shape.get_values(), *like_at_run_time(op, like))),)


KERNELS = {
    sh.ReshapeOp: run_reshape,
    sh.TransposeOp: run_transpose,
    sh.NarrowOp: run_narrow,
    sh.ConcatOp: run_concat,
    sh.ExpandOp: run_expand,
}
