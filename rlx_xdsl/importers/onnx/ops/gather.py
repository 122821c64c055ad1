"""Gather along one axis, GatherElements, OneHot. A negative index counts from the end, as
ONNX says: constant indices are normalised at import; `mir.gather` counts a run-time one
from the end itself."""

from __future__ import annotations

import math

import numpy as np

from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


@rule("Gather")
def gather(t, node):
    table = t.value(0)
    axis = t.attr("axis", 0) % t.rank(table)
    size = t.shape(table)[axis]
    name = t.input(1)
    if name in t.consts and name not in t.initializers:
        indices = t.consts[name]
        if size != DYNAMIC:
            indices = np.where(indices < 0, indices + size, indices)
        return t.e.mir.gather(table, t.constant(indices, "i64"), axis=axis)
    return t.e.mir.gather(table, t.value(1), axis=axis)


@rule("GatherElements")
def gather_elements(t, node):
    """`out[p] = data[p with p[axis] = indices[p]]` (`numpy.take_along_axis`)."""
    return take_along_axis(t, t.value(0), t.value(1), t.attr("axis", 0))


def take_along_axis(t, data, indices, axis: int):
    """`data` picked at `indices` along `axis` (same rank, static shapes): one `mir.gather`
    from the flattened `data` at `sum_d coordinate_d * stride_d`, the coordinates iotas but
    along `axis`, where they are `indices` (negative ones wrapped)."""
    shape, index_shape = t.shape(data), t.shape(indices)
    if DYNAMIC in shape or DYNAMIC in index_shape:
        raise t.fail("GatherElements of dynamic shape is not supported")
    axis %= len(shape)
    indices = t.e.mir.cast(indices, "i64") if t.dtype(indices) != "i64" else indices
    negative = t.e.mir.compare(indices, t.constant(0, "i64"), "lt")
    indices = t.e.mir.where(negative, t.e.mir.add(indices, t.constant(shape[axis], "i64")), indices)
    flat = None
    for d in range(len(shape)):
        coordinate = indices if d == axis else t.e.mir.iota(index_shape, "i64", dimension=d)
        stride = math.prod(shape[d + 1 :])
        term = t.e.mir.mul(coordinate, t.constant(stride, "i64")) if stride != 1 else coordinate
        flat = term if flat is None else t.e.mir.add(flat, term)
    table = t.e.mir.reshape(data, new_shape=[math.prod(shape)])
    return t.e.mir.gather(table, flat, axis=0)


@rule("OneHot")
def one_hot(t, node):
    """`values[1]` where the position along the new `axis` equals the index (negative ones
    wrapped by `depth`), `values[0]` elsewhere; out-of-range indices give a row of `values[0]`."""
    indices = t.value(0)
    depth = int(np.asarray(t.static(1, "depth")).reshape(-1)[0])
    values = t.value(2)
    shape = t.shape(indices)
    if DYNAMIC in shape:
        raise t.fail("OneHot of a dynamic shape is not supported")
    axis = t.attr("axis", -1) % (len(shape) + 1)
    e = t.e.mir
    indices = e.cast(indices, "i64") if t.dtype(indices) != "i64" else indices
    negative = e.compare(indices, t.constant(0, "i64"), "lt")
    indices = e.where(negative, e.add(indices, t.constant(depth, "i64")), indices)
    out_shape = [*shape[:axis], depth, *shape[axis:]]
    expanded = e.reshape(indices, new_shape=[*shape[:axis], 1, *shape[axis:]])
    hot = e.compare(e.iota(out_shape, "i64", dimension=axis), expanded, "eq")
    off = e.gather(values, t.constant(0, "i64"), axis=0)
    on = e.gather(values, t.constant(1, "i64"), axis=0)
    return e.where(hot, on, off)


@rule("ScatterElements", "Scatter")
def scatter_elements(t, node):
    """`data` with `updates[p]` written (or reduced) at `p` with `p[axis] = indices[p]` (opset
    10's `Scatter` is the same op, without reductions)."""
    data, updates = t.value(0), t.value(2)
    indices = np.asarray(t.static(1, "indices")).astype(np.int64)
    shape = t.shape(data)
    if DYNAMIC in shape:
        raise t.fail("ScatterElements of a tensor with dynamic dims is not supported")
    axis = t.attr("axis", 0) % len(shape)
    where = list(np.indices(indices.shape))
    where[axis] = np.where(indices < 0, indices + shape[axis], indices)
    targets = np.ravel_multi_index(tuple(where), shape).ravel()
    return _scatter(t, data, updates, targets, np.arange(indices.size))


@rule("ScatterND")
def scatter_nd(t, node):
    """`data` with the slice `data[indices[i]]` replaced by (or reduced with) `updates[i]`."""
    data, updates = t.value(0), t.value(2)
    indices = np.asarray(t.static(1, "indices")).astype(np.int64)
    shape = t.shape(data)
    if DYNAMIC in shape:
        raise t.fail("ScatterND of a tensor with dynamic dims is not supported")
    depth = indices.shape[-1]
    prefixes = indices.reshape(-1, depth)
    prefixes = np.where(prefixes < 0, prefixes + np.array(shape[:depth]), prefixes)
    inner = int(np.prod(shape[depth:], dtype=np.int64))
    starts = np.ravel_multi_index(tuple(prefixes.T), shape[:depth]) * inner
    targets = (starts[:, None] + np.arange(inner)[None, :]).ravel()
    return _scatter(t, data, updates, targets, np.arange(targets.size))


_REDUCTIONS = {"none": None, "add": "add", "mul": "mul", "max": "max", "min": "min"}


def _scatter(t, data, updates, targets: np.ndarray, sources: np.ndarray):
    """Writes in the order given, each flat `updates[sources[i]]` to flat `data[targets[i]]`
    under `reduction`: one masked gather per repetition of a target (ONNX's reference applies
    the updates one by one), so duplicates reduce (or, with `none`, the last one wins)."""
    reduction = t.attr("reduction", b"none")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    if reduction not in _REDUCTIONS:
        raise t.fail(f"reduction '{reduction}' is not supported")
    e = t.e.mir
    size = int(np.prod(t.shape(data), dtype=np.int64))
    out = e.reshape(data, new_shape=[size])
    flat_updates = e.reshape(updates, new_shape=[-1])
    seen: dict[int, int] = {}
    levels = []
    for target, source in zip(targets.tolist(), sources.tolist()):
        level = seen.get(target, 0)
        seen[target] = level + 1
        if level == len(levels):
            levels.append(np.full(size, -1, np.int64))
        levels[level][target] = source
    for picks in levels:
        mask = t.constant(picks >= 0, "i1")
        picked = e.gather(flat_updates, t.constant(np.maximum(picks, 0), "i64"), axis=0)
        op = _REDUCTIONS[reduction]
        out = e.where(mask, picked if op is None else getattr(e, op)(out, picked), out)
    return e.reshape(out, new_shape=t.shape(data))
