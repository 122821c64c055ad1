"""Shape and view ops: view/reshape, permute, expand, (un)squeeze, slice, select, cat, split.

Reshapes take the node's own result shape (from the exported metadata), so every
size-changing view becomes one `mir.reshape`; a dynamic dim becomes its -1 (at most one).
"""

from __future__ import annotations

import math

import numpy as np
import torch

from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


def reshape_to(t, x, shape: list[int]):
    """One `mir.reshape` to `shape` (the node's result shape); with several dynamic dims,
    those that are input sizes (`Dim`s) are read at run time from that input (`like`),
    and one other (`B * S`) is inferred."""
    new_shape = [-1 if d == DYNAMIC else d for d in shape]
    if new_shape.count(-1) <= 1:
        return t.e.mir.reshape(x, new_shape=new_shape)
    sizes = t.meta(t.node).shape
    named = [i for i, d in enumerate(sizes) if not isinstance(d, int) and str(d) in t.input_sizes]
    if new_shape.count(-1) - len(named) > 1:
        raise t.fail(f"a reshape to {len(new_shape)} dims with several computed dynamic sizes is not supported")
    like, like_dims = t.like_sizes(t.node, named)
    return t.e.mir.reshape(x, new_shape=new_shape, like=like, like_dims=like_dims)


@rule(
    aten.view.default,
    aten._unsafe_view.default,
    aten.reshape.default,
    aten.unsqueeze.default,
    aten.squeeze.dims,
    aten.squeeze.dim,
    aten.squeeze.default,
    aten.flatten.using_ints,
)
def view(t, node):
    return reshape_to(t, t.value(node.args[0]), t.shape(node))


@rule(aten.permute.default)
def permute(t, node):
    rank = t.rank(node.args[0])
    return t.e.mir.transpose(t.value(node.args[0]), perm=[d % rank for d in node.args[1]])


@rule(aten.transpose.int)
def transpose(t, node):
    rank = t.rank(node.args[0])
    a, b = (d % rank for d in node.args[1:3])
    perm = list(range(rank))
    perm[a], perm[b] = perm[b], perm[a]
    return t.e.mir.transpose(t.value(node.args[0]), perm=perm)


@rule(aten.t.default)
def t_(t, node):
    if t.rank(node.args[0]) < 2:
        return t.value(node.args[0])
    return t.e.mir.transpose(t.value(node.args[0]), perm=[1, 0])


@rule(aten.expand.default)
def expand(t, node):
    """A dynamic target size keeps a dynamic input dim (-1); a static dim (1, or a new
    leading dim) broadcast to a dynamic size takes it at run time from the tensor the
    size was read from (`like`)."""
    sizes = node.args[1]
    target = t.ints(sizes)
    source = t.shape(node.args[0])
    aligned = [None] * (len(target) - len(source)) + source
    grown = [i for i, (size, had) in enumerate(zip(target, aligned, strict=True)) if size == -1 and had != DYNAMIC]
    grown = [i for i in grown if not isinstance(sizes[i], int)]  # a literal -1 keeps the input dim
    if not grown:
        return t.e.mir.expand(t.value(node.args[0]), target_shape=target)
    like, like_dims = t.sized_by(sizes, grown)
    return t.e.mir.expand(t.value(node.args[0]), target_shape=target, like=like, like_dims=like_dims)


def _narrow(t, x_node, axis: int, start: int | None, end: int | None):
    size = t.shape(x_node)[axis]
    start = 0 if start is None else start
    if start == 0 and (end is None or end >= 2**62):  # `x[:]`: the whole dim, even a dynamic one
        return t.value(x_node)
    end = size if end is None or (size != DYNAMIC and end > size) else end
    if size == DYNAMIC and (start < 0 or end < 0 or end >= 2**62):
        raise t.fail("a slice of a dynamic dim relative to its end is not supported")
    if size != DYNAMIC:
        start = max(0, min(size, start + size if start < 0 else start))
        end = max(start, min(size, end + size if end < 0 else end))
    return t.e.mir.narrow(t.value(x_node), axis=axis, start=start, len=end - start)


@rule(aten.slice.Tensor)
def slice_(t, node):
    args = list(node.args) + [None] * (5 - len(node.args))
    x, dim, start, end, step = args[:5]
    axis = (dim or 0) % t.rank(x)
    if (step or 1) != 1:
        return _strided(t, x, axis, start, end, step)
    if not isinstance(start, int | None):
        raise t.fail("a slice with a dynamic start is not supported")
    if isinstance(end, torch.fx.Node):  # `x[:, :seq]`: the length is an input's size
        if (start or 0) < 0:
            raise t.fail("a slice with a dynamic end and a negative start is not supported")
        like, like_dims = t.like_sizes(node, [axis])
        return t.e.mir.narrow(t.value(x), axis=axis, start=start or 0, len=-1, like=like, like_dims=like_dims)
    return _narrow(t, x, axis, start, end)


def _strided(t, x_node, axis: int, start, end, step: int):
    """`x[start:end:step]` along `axis` of a static dim (Swin's patch merging takes
    `x[:, 0::2, 0::2]`): a `mir.gather` of the slices Python's `slice` picks."""
    size = t.shape(x_node)[axis]
    if size == DYNAMIC or not isinstance(start, int | None) or not isinstance(end, int | None):
        raise t.fail(f"a slice with step {step} of a dynamic dim or with dynamic bounds is not supported")
    picked = np.arange(*slice(start, end, step).indices(size))
    return t.e.mir.gather(t.value(x_node), t.constant(picked, "i64"), axis=axis)


@rule(aten.select.int)
def select(t, node):
    x, dim, index = node.args
    axis = dim % t.rank(x)
    part = _narrow(t, x, axis, index, index + 1 if index != -1 else None)
    return reshape_to(t, part, t.shape(node))


@rule(aten.cat.default)
def cat(t, node):
    tensors = node.args[0]
    dim = node.args[1] if len(node.args) > 1 else 0
    dtype = t.dtype(node)
    values = [t.value(v, dtype) for v in tensors if 0 not in t.shape(v)]
    return t.e.mir.concat(*values, axis=dim % t.rank(tensors[0]))


@rule(aten.split_with_sizes.default)
def split_with_sizes(t, node):
    x, sizes = node.args[:2]
    axis = (node.args[2] if len(node.args) > 2 else 0) % t.rank(x)
    parts, start = [], 0
    for size in sizes:
        parts.append(t.e.mir.narrow(t.value(x), axis=axis, start=start, len=size))
        start += size
    return tuple(parts)


def _dense_order(shape, strides) -> list[int] | None:
    """The dims from outermost to innermost in memory when `strides` lay `shape` out densely
    (row-major after some permutation: contiguous, channels-last, a transpose), else None.
    Dims of size 1 have any stride."""
    order = sorted(range(len(shape)), key=lambda d: (shape[d] != 1, -strides[d]))
    expected = 1
    for d in reversed(order):
        if shape[d] != 1 and strides[d] != expected:
            return None
        expected *= shape[d]
    return order


@rule(aten.as_strided.default)
def as_strided(t, node):
    """A strided view that reads its input's memory densely: the input laid out as PyTorch
    holds it (its dims in memory order: contiguous or channels-last), flattened, narrowed
    to the view's first element and count, reshaped to the view's dims in memory order and
    permuted back. A view that overlaps, skips elements or reads a non-dense input is a
    located error."""
    args = list(node.args) + [None] * (4 - len(node.args))
    x, size, stride, offset = args[:4]
    meta = t.meta(x)
    in_shape, out_shape = t.shape(x), list(size)
    if DYNAMIC in in_shape or not all(isinstance(v, int) for v in [*out_shape, *stride]):
        raise t.fail("as_strided with dynamic sizes is not supported")
    in_order = _dense_order(in_shape, list(meta.stride()))
    out_order = _dense_order(out_shape, list(stride))
    start = (offset or 0) - meta.storage_offset()
    count = math.prod(out_shape)
    if in_order is None or out_order is None or start < 0 or start + count > math.prod(in_shape):
        raise t.fail(
            f"as_strided(size={out_shape}, stride={list(stride)}, storage_offset={offset or 0}) of a tensor "
            f"of shape {in_shape} and strides {list(meta.stride())} is not a dense view of a contiguous or "
            "channels-last tensor"
        )
    memory = t.e.mir.reshape(t.e.mir.transpose(t.value(x), perm=in_order), new_shape=[-1])
    if start or count != math.prod(in_shape):
        memory = t.e.mir.narrow(memory, axis=0, start=start, len=count)
    view = t.e.mir.reshape(memory, new_shape=[out_shape[d] for d in out_order])
    return t.e.mir.transpose(view, perm=[out_order.index(d) for d in range(len(out_shape))])
