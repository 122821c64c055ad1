"""numpy semantics of MIR reductions and scans: reduce, softmax, cumsum, topk.

Kernels compute in the op's dtype, except that f16/bf16 accumulate in f32
(`numerics.widened`, as GPU kernels do) and the result is rounded back once.
Integer sums wrap; integer means sum in 64 bits and truncate (`numerics.divide`); max/min propagate
NaN; a max/min/mean over zero elements is a run-time error for integers and for
max/min (there is no value to return), and NaN for float means.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl import numerics
from rlx_xdsl.dialects.mir import reduction as red
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.interpreters.common import KernelError, as_result, widened


def reduce(x: np.ndarray, kind: ReduceKind, axes: tuple[int, ...], keep_dim: bool) -> np.ndarray:
    """Reduce `x` (already widened) over `axes`, staying in x's dtype."""
    opts = {"axis": axes, "keepdims": keep_dim}
    count = int(np.prod([x.shape[a] for a in axes]))
    if kind == ReduceKind.SUM:
        return np.sum(x, dtype=x.dtype, **opts)
    if kind == ReduceKind.PROD:
        return np.prod(x, dtype=x.dtype, **opts)
    if count == 0 and (kind != ReduceKind.MEAN or numerics.is_integer(x.dtype)):
        raise KernelError(f"{kind.value} over zero elements (axes {list(axes)} of shape {list(x.shape)})")
    if kind == ReduceKind.MAX:
        return numerics.reduce_max(x, **opts)
    if kind == ReduceKind.MIN:
        return numerics.reduce_min(x, **opts)
    if numerics.is_integer(x.dtype):  # summed in 64 bits, so the mean is exact
        wide = np.dtype(np.uint64 if x.dtype.kind == "u" else np.int64)
        return numerics.divide(np.sum(x, dtype=wide, **opts), np.asarray(count, wide))
    return numerics.divide(np.sum(x, dtype=x.dtype, **opts), np.asarray(count, x.dtype))


def softmax(x: np.ndarray, axis: int) -> np.ndarray:
    """Numerically stable softmax: the max is subtracted before exponentiating.

    IEEE arithmetic decides the non-finite cases: a row holding NaN or +inf, or
    only -inf, is NaN (as in PyTorch and ONNX).
    """
    shifted = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return shifted / np.sum(shifted, axis=axis, keepdims=True)


def cumsum(x: np.ndarray, axis: int, exclusive: bool) -> np.ndarray:
    """Running sum; the exclusive form sums a zero-prefixed copy and drops the last slice."""
    if not exclusive:
        return np.cumsum(x, axis=axis, dtype=x.dtype)
    pad = [(0, 0)] * x.ndim
    pad[axis] = (1, 0)
    keep = [slice(None)] * x.ndim
    keep[axis] = slice(None, -1)
    return np.cumsum(np.pad(x, pad), axis=axis, dtype=x.dtype)[tuple(keep)]


def topk(x: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Largest-first top k along the last axis; ties keep the lower index first.

    A stable ascending sort of the reversed row, read backwards, orders values
    descending and equal values by ascending original index, for any dtype
    (negating would overflow unsigned and boolean types). numpy sorts NaN after
    every number, so NaN counts as the largest value (as in `torch.topk`);
    -0.0 and 0.0 tie. Halves are sorted as their (exact) f32 values.
    """
    last = x.shape[-1]
    order = np.argsort(widened(x)[..., ::-1], axis=-1, kind="stable")[..., ::-1]
    indices = (last - 1 - order[..., :k]).astype(np.int64)
    return np.take_along_axis(x, indices, axis=-1), indices


def run_reduce(op: red.ReduceOp, x: np.ndarray) -> tuple[np.ndarray]:
    with np.errstate(all="ignore"):
        value = reduce(widened(x), op.kind.data, op.normalized_axes(), op.keep_dim is not None)
    return (as_result(op, value),)


def run_softmax(op: red.SoftmaxOp, x: np.ndarray) -> tuple[np.ndarray]:
    with np.errstate(all="ignore"):
        return (as_result(op, softmax(widened(x), op.normalized_axis())),)


def run_cumsum(op: red.CumsumOp, x: np.ndarray) -> tuple[np.ndarray]:
    with np.errstate(all="ignore"):
        value = cumsum(widened(x), op.normalized_axis(), op.exclusive is not None)
    return (as_result(op, value),)


def run_topk(op: red.TopkOp, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    values, indices = topk(x, op.k.value.data)
    return (as_result(op, values, 0), as_result(op, indices, 1))


KERNELS = {
    red.ReduceOp: run_reduce,
    red.SoftmaxOp: run_softmax,
    red.CumsumOp: run_cumsum,
    red.TopkOp: run_topk,
}
