"""Reductions over dims: sum, mean, amax, amin, prod, var; cumsum; top-k, argmax/argmin, max/min with indices."""

from __future__ import annotations

import math

import torch

from rlx_xdsl.importers import common
from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


def _axes(t, node, dims) -> list[int]:
    rank = t.rank(node.args[0])
    if dims is None or (isinstance(dims, list | tuple) and len(dims) == 0):
        return list(range(rank))
    dims = [dims] if isinstance(dims, int) else list(dims)
    return sorted(d % rank for d in dims) if rank else []


def _reduce_rule(kind: str):
    def translate(t, node):
        if node.target in (aten.sum.default, aten.mean.default):
            dims, keep = None, False
        else:
            dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
            keep = bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False))
        x = t.value(node.args[0], t.dtype(node))
        return t.e.mir.reduce(x, kind=kind, axes=_axes(t, node, dims), keep_dim=keep)

    return translate


for _kind, _overloads in {
    "sum": (aten.sum.dim_IntList, aten.sum.default),
    "mean": (aten.mean.dim, aten.mean.default),
    "max": (aten.amax.default,),
    "min": (aten.amin.default,),
    "prod": (aten.prod.dim_int,),
}.items():
    rule(*_overloads)(_reduce_rule(_kind))


@rule(aten.var.correction)
def var(t, node):
    """`sum((x - mean)^2) / (N - correction)` over the dims."""
    dims = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    axes = _axes(t, node, dims)
    shape = t.shape(node.args[0])
    if any(shape[a] == DYNAMIC for a in axes):
        raise t.fail("a variance over a dynamic dim is not supported")
    count = math.prod(shape[a] for a in axes)
    correction = node.kwargs.get("correction")
    correction = 1 if correction is None else correction
    keep = node.kwargs.get("keepdim", False)
    dtype = t.dtype(node)
    x = t.value(node.args[0], dtype)
    mean = t.e.mir.reduce(x, kind="mean", axes=axes, keep_dim=True)
    diff = t.e.mir.sub(x, mean)
    total = t.e.mir.reduce(t.e.mir.mul(diff, diff), kind="sum", axes=axes, keep_dim=bool(keep))
    return t.e.mir.div(total, t.value(float(count - correction), dtype))


@rule(aten.cumsum.default)
def cumsum(t, node):
    x = t.value(node.args[0], t.dtype(node))
    return t.e.mir.cumsum(x, axis=node.args[1] % max(t.rank(node.args[0]), 1))


@rule(aten.topk.default)
def topk(t, node):
    args = list(node.args) + [None] * (5 - len(node.args))
    x, k, dim, largest = args[0], args[1], args[2], args[3]
    if not isinstance(k, int):
        raise t.fail("a dynamic k is not supported")
    dim = -1 if dim is None else dim
    largest = True if largest is None else largest
    return common.top_k(t.e, t.value(x), k, dim % t.rank(x), bool(largest), t.dtype(x))


@rule(aten.linalg_vector_norm.default)
def vector_norm(t, node):
    """`torch.linalg.vector_norm(x, ord, dim, keepdim, dtype=)`: any order (1, 2, inf, -inf,
    0, p) over any dims (all by default); `x` is cast to the result dtype first."""
    args = list(node.args) + [None] * (4 - len(node.args))
    x, order, dims, keep = args[0], args[1], args[2], args[3]
    order = node.kwargs.get("ord", 2 if order is None else order)
    dims = node.kwargs.get("dim", dims)
    keep = bool(node.kwargs.get("keepdim", keep or False))
    dtype = t.dtype(node)
    if not dtype.startswith(("f", "bf")):
        raise t.fail(f"a vector norm of {dtype} is not supported (only of floats)")
    return common.vector_norm(t.e, t.value(x, dtype), float(order), _axes(t, node, dims), keep, dtype)


def _sort_args(node):
    """`(x, dim, descending)` of `sort`/`argsort`, default and `.stable` overloads."""
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim", -1)
    descending = node.args[2] if len(node.args) > 2 else node.kwargs.get("descending", False)
    return node.args[0], dim, bool(descending)


@rule(aten.sort.default, aten.sort.stable)
def sort(t, node):
    """Values and i64 indices, stable (equal values keep their order) with or without
    `stable=True`; NaN sorts as the largest (`common.sort`)."""
    x, dim, descending = _sort_args(node)
    return common.sort(t.e, t.value(x), dim, descending, t.dtype(x))


@rule(aten.argsort.default, aten.argsort.stable)
def argsort(t, node):
    x, dim, descending = _sort_args(node)
    return common.sort(t.e, t.value(x), dim, descending, t.dtype(x))[1]


def _extreme(t, node, largest: bool, with_values: bool):
    x = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else node.kwargs.get("dim")
    keep = bool(node.args[2] if len(node.args) > 2 else node.kwargs.get("keepdim", False))
    value = t.value(x)
    if dim is None:  # over all elements: flatten first
        value, dim = t.e.mir.reshape(value, new_shape=[-1]), 0
    axis = dim % max(len(value.type.get_shape()), 1)
    values, indices = common.top_k(t.e, value, 1, axis, largest, t.dtype(x))
    if not keep:
        out_shape = [d for i, d in enumerate(values.type.get_shape()) if i != axis]
        new_shape = [-1 if d == DYNAMIC else d for d in out_shape]
        if new_shape.count(-1) > 1:
            raise t.fail("keepdim=False with several dynamic dims is not supported")
        values = t.e.mir.reshape(values, new_shape=new_shape)
        indices = t.e.mir.reshape(indices, new_shape=new_shape)
    return (values, indices) if with_values else indices


@rule(aten.argmax.default)
def argmax(t, node):
    return _extreme(t, node, True, False)


@rule(aten.argmin.default)
def argmin(t, node):
    return _extreme(t, node, False, False)


@rule(aten.max.dim)
def max_dim(t, node):
    return _extreme(t, node, True, True)


@rule(aten.min.dim)
def min_dim(t, node):
    return _extreme(t, node, False, True)


@rule(aten.histc.default)
def histc(t, node):
    """`torch.histc(x, bins=100, min=0, max=0)`: counts of x's elements (any shape) in
    `bins` equal bins over `[min, max]`, in x's float dtype. As torch's CPU kernel (ATen
    `Histogram.cpp`): with `min == max` the range is the data's (`x.min()`, `x.max()`, read
    at run time), widened by 1 each side when that is one value too; element v goes to bin
    `trunc((v - min) * bins / (max - min))` in x's dtype, `max` itself to the last bin;
    elements outside the range (and NaN) are not counted (`min > max` is torch's own
    export error)."""
    args = list(node.args) + [None] * (4 - len(node.args))
    x = args[0]
    bins = int(node.kwargs.get("bins", 100 if args[1] is None else args[1]))
    low = float(node.kwargs.get("min", 0 if args[2] is None else args[2]))
    high = float(node.kwargs.get("max", 0 if args[3] is None else args[3]))
    dtype = t.dtype(node)
    e = t.e
    value = e.mir.reshape(t.value(x, dtype), new_shape=[-1])  # [N]
    if low == high:  # the data's range, at run time
        low, high = (e.mir.reduce(value, kind=kind, axes=[0]) for kind in ("min", "max"))
        one = t.value(1.0, dtype)
        same = e.mir.compare(low, high, "eq")
        low, high = e.mir.where(same, e.mir.sub(low, one), low), e.mir.where(same, e.mir.add(high, one), high)
    else:
        low, high = t.value(low, dtype), t.value(high, dtype)
    inside = e.mir.mul(e.mir.compare(value, low, "ge"), e.mir.compare(value, high, "le"))
    scaled = e.mir.div(e.mir.mul(e.mir.sub(value, low), t.value(float(bins), dtype)), e.mir.sub(high, low))
    position = e.mir.min(e.mir.cast(scaled, "i64"), t.value(bins - 1, "i64"))  # max: the last bin
    bin_ids = e.mir.iota([bins, 1], "i64", dimension=0)
    hits = e.mir.mul(e.mir.compare(position, bin_ids, "eq"), inside)  # [bins, N]
    return e.mir.reduce(e.mir.cast(hits, dtype), kind="sum", axes=[1])
