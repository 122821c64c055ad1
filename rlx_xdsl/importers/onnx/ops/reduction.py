"""ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2, ArgMax/ArgMin, TopK, CumSum.

Axes come from the `axes` input (ReduceSum from opset 13, the others from 18) or
attribute; no axes reduce everything unless `noop_with_empty_axes`.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np

from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC

_KINDS = {"ReduceSum": "sum", "ReduceMean": "mean", "ReduceMax": "max", "ReduceMin": "min", "ReduceProd": "prod"}


def _axes(t, x) -> list[int] | None:
    axes = t.static(1, "axes") if len(t.node.input) > 1 else t.attr("axes")
    if axes is None or len(axes) == 0:
        return None if t.attr("noop_with_empty_axes", 0) else list(range(t.rank(x)))
    return sorted(int(a) % t.rank(x) for a in axes)


def _reduce(t, x, kind: str):
    axes = _axes(t, x)
    if axes is None:
        return x
    keep = bool(t.attr("keepdims", 1))
    shape = t.shape(x)
    if kind in ("max", "min") and any(shape[a] == 0 for a in axes):  # ONNX: the identity, -inf / +inf
        return _empty_extreme(t, x, axes, keep, kind)
    if t.dtype(x) == "i1" and kind in ("max", "min"):  # any / all: reduce 0/1 as i8
        reduced = t.e.mir.reduce(t.e.mir.cast(x, "i8"), kind=kind, axes=axes, keep_dim=keep)
        return t.e.mir.compare(reduced, t.constant(0, "i8"), "ne")
    return t.e.mir.reduce(x, kind=kind, axes=axes, keep_dim=keep)


def _empty_extreme(t, x, axes: list[int], keep: bool, kind: str):
    """Max/min over zero elements: the reduction's identity (the dtype's lowest or highest
    value: -inf/+inf for floats), as ONNX's reference."""
    from rlx_xdsl.dtypes import dtype_named

    shape = t.shape(x)
    if DYNAMIC in shape:
        raise t.fail(f"{kind} over zero elements of a dynamic shape is not supported")
    dtype = t.dtype(x)
    d = dtype_named(dtype)
    if d.is_float:
        fill = -np.inf if kind == "max" else np.inf
    elif d.kind == "bool":  # false is the lowest, true the highest
        fill = kind != "max"
    else:
        info = ml_dtypes.iinfo(d.numpy)
        fill = info.min if kind == "max" else info.max
    result = [1 if a in axes else d for a, d in enumerate(shape) if keep or a not in axes]
    return t.constant(np.full(result, fill), dtype)


@rule(*_KINDS)
def reduce_(t, node):
    return _reduce(t, t.value(0), _KINDS[node.op_type])


@rule("ReduceSumSquare")
def reduce_sum_square(t, node):
    x = t.value(0)
    return _reduce(t, t.e.mir.mul(x, x), "sum")


@rule("ReduceLogSum")
def reduce_log_sum(t, node):
    return t.e.mir.log(_reduce(t, t.value(0), "sum"))


@rule("ReduceLogSumExp")
def reduce_log_sum_exp(t, node):
    """`log(sum(exp(x - m))) + m` with `m` the max (kept finite), over the axes."""
    x = t.value(0)
    axes = _axes(t, x)
    if axes is None:
        return x
    if any(t.shape(x)[a] == 0 for a in axes):  # log(0) = -inf
        return t.e.mir.log(_reduce(t, t.e.mir.exp(x), "sum"))
    e = t.e.mir
    peak = e.reduce(x, kind="max", axes=axes, keep_dim=True)
    total = e.log(e.reduce(e.exp(e.sub(x, peak)), kind="sum", axes=axes, keep_dim=True))
    result = e.add(total, peak)
    if not t.attr("keepdims", 1):  # drop the size-1 axes (a sum over one element)
        result = e.reduce(result, kind="sum", axes=axes, keep_dim=False)
    return result


@rule("ReduceL2")
def reduce_l2(t, node):
    x = t.value(0)
    return t.e.mir.sqrt(_reduce(t, t.e.mir.mul(x, x), "sum"))


@rule("CumSum")
def cumsum(t, node):
    """`mir.cumsum`; `reverse` reads the axis backwards (a gather at `n-1 .. 0`) before and after."""
    x = t.value(0)
    axis = int(t.static(1, "axis").reshape(())) % t.rank(x)
    reverse = bool(t.attr("reverse", 0))
    if reverse:
        if t.shape(x)[axis] == DYNAMIC:
            raise t.fail("a reversed CumSum along a dynamic axis is not supported")
        backwards = t.constant(np.arange(t.shape(x)[axis] - 1, -1, -1), "i64")
        x = t.e.mir.gather(x, backwards, axis=axis)
    y = t.e.mir.cumsum(x, axis=axis, exclusive=bool(t.attr("exclusive", 0)))
    return t.e.mir.gather(y, backwards, axis=axis) if reverse else y


@rule("CumProd")
def cumprod(t, node):
    """Running products along a static axis as a Hillis-Steele scan: `log2(n)` products with
    the tensor shifted by 1, 2, 4, ... (ones shifted in); `exclusive` shifts in one 1 first,
    `reverse` reads the axis backwards before and after. Integers are exact (wrapping products
    associate); floats associate the products in another order than a sequential loop."""
    x = t.value(0)
    axis = int(t.static(1, "axis").reshape(())) % t.rank(x)
    n = t.shape(x)[axis]
    if n == DYNAMIC:
        raise t.fail("CumProd along a dynamic axis is not supported")
    backwards = t.constant(np.arange(n - 1, -1, -1), "i64")
    if t.attr("reverse", 0):
        x = t.e.mir.gather(x, backwards, axis=axis)
    one = t.constant(1, t.dtype(x))

    def shifted(y, step: int):
        return common.pad_constant(t.e, t.e.mir.narrow(y, axis=axis, start=0, len=n - step), {axis: (step, 0)}, one)

    if t.attr("exclusive", 0) and n:
        x = shifted(x, 1)
    step = 1
    while step < n:
        x = t.e.mir.mul(x, shifted(x, step))
        step *= 2
    return t.e.mir.gather(x, backwards, axis=axis) if t.attr("reverse", 0) else x


@rule("ReduceL1")
def reduce_l1(t, node):
    return _reduce(t, t.e.mir.abs(t.value(0)), "sum")


@rule("TopK")
def top_k(t, node):
    """The `K` largest (or, `largest = 0`, smallest) along `axis`, sorted, ties lower index
    first, NaN largest: `mir.topk`; the smallest are the first `K` of `common.sort`'s
    ascending sort (exact for integers, no negation). `K` must be a constant."""
    if not t.attr("sorted", 1):
        raise t.fail("TopK with sorted = 0 is not supported")
    x = t.value(0)
    k = int(t.static(1, "K").reshape(-1)[0])
    axis = t.attr("axis", -1) % t.rank(x)
    if t.attr("largest", 1):
        return common.top_k(t.e, x, k, axis, True, t.dtype(x))
    values, indices = common.sort(t.e, x, axis, False, t.dtype(x))
    if k == t.shape(x)[axis]:
        return values, indices
    return tuple(t.e.mir.narrow(v, axis=axis, start=0, len=k) for v in (values, indices))


@rule("ArgMax", "ArgMin")
def arg_extreme(t, node):
    """`mir.topk` with k = 1; ties keep the first index, as ONNX's default `select_last_index = 0`.
    With `select_last_index = 1` the axis is read backwards (a gather at `n-1 .. 0`, so the
    first of the reversed ties is the last one) and the index mapped back, `n - 1 - i`."""
    x = t.value(0)
    axis = t.attr("axis", 0) % t.rank(x)
    last = bool(t.attr("select_last_index", 0))
    size = t.shape(x)[axis]
    if last:
        if size == DYNAMIC:
            raise t.fail("select_last_index = 1 along a dynamic axis is not supported")
        x = t.e.mir.gather(x, t.constant(np.arange(size - 1, -1, -1), "i64"), axis=axis)
    _, indices = common.top_k(t.e, x, 1, axis, node.op_type == "ArgMax", t.dtype(x))
    if last:
        indices = t.e.mir.sub(t.constant(size - 1, t.dtype(indices)), indices)
    if not t.attr("keepdims", 1):
        shape = [-1 if d == DYNAMIC else d for i, d in enumerate(t.shape(indices)) if i != axis]
        if shape.count(-1) > 1:
            raise t.fail("keepdims = 0 with several dynamic dims is not supported")
        indices = t.e.mir.reshape(indices, new_shape=shape)
    return indices


@rule("Hardmax")
def hardmax(t, node):
    """1 at the first maximum along `axis` (opset 13), 0 elsewhere."""
    x = t.value(0)
    axis = t.attr("axis", -1) % t.rank(x)
    _, first = common.top_k(t.e, x, 1, axis, True, t.dtype(x))
    if DYNAMIC in t.shape(x):
        raise t.fail("Hardmax of a dynamic shape is not supported")
    positions = t.e.mir.iota(t.shape(x), t.dtype(first), dimension=axis)
    return t.e.mir.cast(t.e.mir.compare(positions, first, "eq"), t.dtype(x))


@rule("LpNormalization")
def lp_normalization(t, node):
    """`x / ||x||_p` along `axis`, p 1 or 2 (0 where the norm is 0)."""
    x = t.value(0)
    p = t.attr("p", 2)
    axis = t.attr("axis", -1) % t.rank(x)
    e = t.e.mir
    if p == 1:
        norm = e.reduce(e.abs(x), kind="sum", axes=[axis], keep_dim=True)
    elif p == 2:
        norm = e.sqrt(e.reduce(e.mul(x, x), kind="sum", axes=[axis], keep_dim=True))
    else:
        raise t.fail(f"p = {p} is not supported (1 or 2)")
    zero = e.compare(norm, t.constant(0, t.dtype(x)), "eq")  # an all-zero slice stays 0, as ONNX's
    return e.div(x, e.where(zero, t.constant(1, t.dtype(x)), norm))
