"""ReduceSum/Mean/Max/Min/Prod/SumSquare/L1/L2, ArgMax/ArgMin, TopK, CumSum.

Axes come from the `axes` input (ReduceSum from opset 13, the others from 18) or
attribute; no axes reduce everything unless `noop_with_empty_axes`.
"""

from __future__ import annotations

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
    if t.dtype(x) == "i1" and kind in ("max", "min"):  # any / all: reduce 0/1 as i8
        reduced = t.e.mir.reduce(t.e.mir.cast(x, "i8"), kind=kind, axes=axes, keep_dim=keep)
        return t.e.mir.compare(reduced, t.constant(0, "i8"), "ne")
    return t.e.mir.reduce(x, kind=kind, axes=axes, keep_dim=keep)


@rule(*_KINDS)
def reduce_(t, node):
    return _reduce(t, t.value(0), _KINDS[node.op_type])


@rule("ReduceSumSquare")
def reduce_sum_square(t, node):
    x = t.value(0)
    return _reduce(t, t.e.mir.mul(x, x), "sum")


@rule("ReduceL2")
def reduce_l2(t, node):
    x = t.value(0)
    return t.e.mir.sqrt(_reduce(t, t.e.mir.mul(x, x), "sum"))


@rule("CumSum")
def cumsum(t, node):
    if t.attr("reverse", 0):
        raise t.fail("a reversed CumSum is not supported")
    axis = int(t.static(1, "axis").reshape(()))
    return t.e.mir.cumsum(t.value(0), axis=axis, exclusive=bool(t.attr("exclusive", 0)))


@rule("ReduceL1")
def reduce_l1(t, node):
    return _reduce(t, t.e.mir.abs(t.value(0)), "sum")


@rule("TopK")
def top_k(t, node):
    """The `K` largest (or, `largest = 0`, smallest) along `axis`, sorted, ties lower index
    first, NaN largest: `mir.topk`; the smallest are the first `K` of `common.sort`'s
    ascending sort (exact for integers, no negation). `K` must be a constant."""
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
    """`mir.topk` with k = 1; ties keep the first index, as ONNX's default `select_last_index = 0`."""
    if t.attr("select_last_index", 0):
        raise t.fail("select_last_index = 1 is not supported")
    x = t.value(0)
    axis = t.attr("axis", 0) % t.rank(x)
    _, indices = common.top_k(t.e, x, 1, axis, node.op_type == "ArgMax", t.dtype(x))
    if not t.attr("keepdims", 1):
        shape = [-1 if d == DYNAMIC else d for i, d in enumerate(t.shape(indices)) if i != axis]
        if shape.count(-1) > 1:
            raise t.fail("keepdims = 0 with several dynamic dims is not supported")
        indices = t.e.mir.reshape(indices, new_shape=shape)
    return indices
