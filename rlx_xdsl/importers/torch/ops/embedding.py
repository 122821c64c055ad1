"""Gathers: embedding, index_select, `x[idx]` indexing and `torch.gather`; the scatter
`x[..., idx, ...] = v` (`index_put`, what `index_copy_` into a static KV cache becomes; one
position is a `mir.dynamic_update_slice`).

Indexing several dims at once (`x[i, j]`, as Hugging Face's mask builders write it)
and `torch.gather` pick single elements: the indexed dims are merged by one reshape
and the index tensors combined into one flat (row-major) index for one `mir.gather`.

`x[idx]` counts a negative index from the end (`x[..., [-2, 1]]`): a constant index
tensor is normalised at import; a run-time one is left to `mir.gather`, which counts
an index in `[-n, 0)` from the end itself, except where several indices are combined
into one flat index (each but the first gets its dim's size added where negative).
"""

from __future__ import annotations

import math

import numpy as np
import torch
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.importers import common
from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.ir.dense import dense_to_numpy
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


@rule(aten.embedding.default)
def embedding(t, node):
    weight, indices = node.args[:2]
    return t.e.mir.gather(t.value(weight), t.value(indices), axis=0)


@rule(aten.index_select.default)
def index_select(t, node):
    x, dim, index = node.args
    return t.e.mir.gather(t.value(x), t.value(index), axis=dim % t.rank(x))


@rule(aten.index.Tensor)
def index(t, node):
    """`x[idx]`, `x[:, idx]` and `x[i, j]`: index tensors on adjacent dims, the others whole."""
    x, indices = node.args
    given = [(axis, i) for axis, i in enumerate(indices) if i is not None]
    if any(t.dtype(i) == "i1" for _, i in given):
        raise t.fail("indexing with a boolean mask (a data-dependent shape) is not supported")
    axes = [axis for axis, _ in given]
    if axes != list(range(axes[0], axes[0] + len(axes))):
        raise t.fail("index tensors on dims that are not adjacent are not supported")
    shape = t.shape(x)
    if len(given) == 1:
        ids = _from_the_end(t, t.value(given[0][1]), shape[axes[0]], at_run_time=False)
        return t.e.mir.gather(t.value(x), ids, axis=axes[0])
    coordinates = [
        _from_the_end(t, t.value(i, "i64"), shape[axis], at_run_time=k > 0) for k, (axis, i) in enumerate(given)
    ]
    return _gather_elements(t, x, axes, coordinates)


def _from_the_end(t, ids: SSAValue, size: int, at_run_time: bool) -> SSAValue:
    """`ids` into `size` slices with `size` added to each negative one (PyTorch indexing): a
    constant at import, a run-time value only when `at_run_time` (else `mir.gather` does it)."""
    owner = ids.owner
    if size == DYNAMIC:
        return ids
    if isinstance(owner, ConstantOp):
        array = dense_to_numpy(owner.value)
        if not (array < 0).any():
            return ids
        return t.e.mir.constant(np.where(array < 0, array + size, array).astype(array.dtype), ids.type.element_type)
    if not at_run_time:
        return ids
    dtype = ids.type.element_type
    negative = t.e.mir.compare(ids, t.e.mir.constant(0, dtype), "lt")
    return t.e.mir.where(negative, t.e.mir.add(ids, t.e.mir.constant(size, dtype)), ids)


@rule(aten.gather.default)
def gather(t, node):
    """`torch.gather(x, dim, index)`: `out[p] = x[p with p[dim] = index[p]]`."""
    x, dim, index = node.args[:3]
    if node.kwargs.get("sparse_grad"):
        raise t.fail("sparse_grad is not supported")
    shape = t.shape(index)
    like = {}
    if DYNAMIC in shape:  # the ramps take the index's run-time sizes
        like = dict(like=t.value(index), like_dims=[a if d == DYNAMIC else -1 for a, d in enumerate(shape)])
    dim %= t.rank(x)
    coordinates = [
        t.value(index, "i64") if axis == dim else t.e.mir.iota(shape, "i64", dimension=axis, **like)
        for axis in range(len(shape))
    ]
    return _gather_elements(t, x, list(range(len(shape))), coordinates)


@rule(aten.index_put.default)
def index_put(t, node):
    """`x[..., idx, ...] = v` (`accumulate`: `+=`) with one 1-D index tensor `idx[T]` on dim
    `d` and `v` of `x`'s shape with `T` at `d`: one index (`T = 1`, not accumulating) is a
    `mir.dynamic_update_slice` (`_write_one`); otherwise `v`'s slices are summed into zeros at `idx` by one
    `mir.scatter_add`, then taken where some index hit (`mir.where`), else `x`'s. A negative
    index counts from the end; a repeated index sums its slices (PyTorch leaves which one
    wins undefined). Other index forms (several tensors, a mask) are a located error."""
    x, indices, values = node.args[:3]
    accumulate = node.args[3] if len(node.args) > 3 else node.kwargs.get("accumulate", False)
    given = [(axis, i) for axis, i in enumerate(indices) if i is not None]
    if len(given) != 1 or t.rank(given[0][1]) != 1 or t.dtype(given[0][1]) == "i1":
        raise t.fail("only assigning through one 1-D index tensor (`x[..., idx, ...] = v`) is supported")
    (axis, idx), shape = given[0], t.shape(x)
    expected = [*shape[:axis], *t.shape(idx), *shape[axis + 1 :]]
    if t.shape(values) != expected:
        raise t.fail(f"the values must have the shape {expected} of the slices they replace, not {t.shape(values)}")
    if shape[axis] == DYNAMIC:
        return _put_dynamic(t, x, axis, idx, values, accumulate)
    if not accumulate and list(t.shape(idx)) == [1]:
        return _write_one(t, x, axis, idx, values)
    mir, ids = t.e.mir, t.value(idx)
    perm = [axis, *(a for a in range(len(shape)) if a != axis)]  # the scattered dim first
    moved = mir.transpose(t.value(values, t.dtype(x)), perm=perm) if axis else t.value(values, t.dtype(x))
    scattered = mir.scatter_add(moved, ids, dim_size=shape[axis])
    if axis:
        scattered = mir.transpose(scattered, perm=[perm.index(a) for a in range(len(shape))])
    if accumulate:
        return mir.add(t.value(x), scattered)
    ones = mir.cast(mir.compare(ids, ids, "eq"), "f32")  # [T], dynamic T too
    hit = mir.compare(mir.scatter_add(ones, ids, dim_size=shape[axis]), t.value(0.0, "f32"), "gt")
    along = [shape[axis] if a == axis else 1 for a in range(len(shape))]
    return mir.where(mir.reshape(hit, new_shape=along), scattered, t.value(x))


def _put_dynamic(t, x, axis: int, idx, values, accumulate: bool):
    """`index_put` along a `?` dim of size n (no static `dim_size` for `mir.scatter_add`):
    each of the n positions compares itself with all T indices (`[n, T]`, `r` or `r - n`
    for a negative index) and takes the sum of the slices that hit it (a sum over -0.0s
    elsewhere, exact), or keeps `x`'s where none did. O(n T) memory."""
    mir, rank = t.e.mir, t.rank(x)
    target, slices = t.value(x), t.value(values, t.dtype(x))
    if axis:  # the written dim first
        perm = [axis, *(a for a in range(rank) if a != axis)]
        target, slices = mir.transpose(target, perm=perm), mir.transpose(slices, perm=perm)
    ids = t.value(idx, "i64")
    rows = mir.iota([DYNAMIC, 1], "i64", dimension=0, like=target, like_dims=[0, -1])  # [n, 1]
    size = _size(t, x, axis)
    hits = mir.max(mir.compare(ids, rows, "eq"), mir.compare(ids, mir.sub(rows, size), "eq"))  # [n, T]
    for _ in range(rank - 1):
        hits = common.unsqueeze(t.e, hits, len(hits.type.get_shape()))  # [n, T, 1...]
    fill = t.value(-0.0 if t.dtype(x).startswith(("f", "bf")) else 0, t.dtype(x))
    summed = mir.reduce(mir.where(hits, common.unsqueeze(t.e, slices, 0), fill), kind="sum", axes=[1])
    if accumulate:
        result = mir.add(target, summed)
    else:
        hit = mir.reduce(mir.cast(hits, "i64"), kind="max", axes=[1])  # [n, 1...]
        result = mir.where(mir.compare(hit, t.value(0, "i64"), "gt"), summed, target)
    if axis:
        result = mir.transpose(result, perm=[perm.index(a) for a in range(rank)])
    return result


def _write_one(t, x, axis: int, idx, values):
    """`x` with its one slice at `idx[0]` along `axis` replaced by `values` (a decode step's
    KV cache write): one `mir.dynamic_update_slice`, which XLA does in place on a donated
    cache. A negative index counts from the end, as in the general form."""
    mir, dtype = t.e.mir, t.dtype(idx)
    at = mir.reshape(t.value(idx), new_shape=[])
    size = t.value(t.shape(x)[axis], dtype)
    at = mir.where(mir.compare(at, t.value(0, dtype), "lt"), mir.add(at, size), at)
    starts = [at if a == axis else t.value(0, dtype) for a in range(t.rank(x))]
    return mir.dynamic_update_slice(t.value(x), t.value(values, t.dtype(x)), *starts)


def _gather_elements(t, x, axes: list[int], coordinates: list):
    """`x` indexed on the adjacent `axes` by the (broadcasting) integer `coordinates`."""
    shape = t.shape(x)
    sizes = [shape[a] for a in axes]
    merged = [*shape[: axes[0]], DYNAMIC if DYNAMIC in sizes else math.prod(sizes), *shape[axes[-1] + 1 :]]
    if merged.count(DYNAMIC) > 1:
        raise t.fail("indexing a tensor with dynamic dims outside the indexed ones is not supported")
    table = t.e.mir.reshape(t.value(x), new_shape=[-1 if d == DYNAMIC else d for d in merged])
    flat = None
    for k, coordinate in enumerate(coordinates):
        after = [shape[a] for a in axes[k + 1 :]]  # the stride: the sizes after the coordinate's dim
        static = math.prod(d for d in after if d != DYNAMIC)
        term = t.e.mir.mul(coordinate, t.value(static, "i64")) if static != 1 else coordinate
        for axis in (a for a in axes[k + 1 :] if shape[a] == DYNAMIC):
            term = t.e.mir.mul(term, _size(t, x, axis))
        flat = term if flat is None else t.e.mir.add(flat, term)
    return t.e.mir.gather(table, flat, axis=axes[0])


def _size(t, x, axis: int):
    """`x`'s `?` size on `axis` as a 0-d i64 tensor: the sum of ones as long as the dim
    at run time."""
    ones = t.e.mir.expand(t.value(1, "i64"), target_shape=[-1], like=t.value(x), like_dims=[axis])
    return t.e.mir.reduce(ones, kind="sum", axes=[0])

