"""Shape ops: Reshape, Transpose, Flatten, (Un)Squeeze, Concat, Slice, Split, Expand,
Shape, ConstantOfShape.

Shapes, axes and slice bounds must be compile-time values (initializers, `Constant`s,
or shape arithmetic the importer folds); `Shape` of a tensor with static dims folds.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


def _reshape(t, x, shape: list[int]):
    if shape.count(-1) > 1:
        raise t.fail(f"a reshape to {shape} with several unknown dims is not supported")
    return t.e.mir.reshape(x, new_shape=shape)


@rule("Reshape")
def reshape(t, node):
    x = t.value(0)
    shape = [int(d) for d in t.static(1, "the shape")]
    if not t.attr("allowzero", 0):
        in_shape = t.shape(x)
        shape = [in_shape[i] if d == 0 else d for i, d in enumerate(shape)]
        shape = [-1 if d == DYNAMIC else d for d in shape]
    return _reshape(t, x, shape)


@rule("Transpose")
def transpose(t, node):
    x = t.value(0)
    perm = t.attr("perm") or list(reversed(range(t.rank(x))))
    return t.e.mir.transpose(x, perm=list(perm))


@rule("Flatten")
def flatten(t, node):
    x = t.value(0)
    shape = t.shape(x)
    axis = t.attr("axis", 1)
    axis = axis + len(shape) if axis < 0 else axis
    outer, inner = shape[:axis], shape[axis:]
    sizes = [int(np.prod(p)) if DYNAMIC not in p else -1 for p in (outer, inner)]
    return _reshape(t, x, sizes)


def _axes(t, rank: int) -> list[int]:
    axes = t.static(1, "axes") if len(t.node.input) > 1 else t.attr("axes")
    return sorted(int(a) % rank for a in axes) if axes is not None else []


@rule("Squeeze")
def squeeze(t, node):
    x = t.value(0)
    shape = t.shape(x)
    axes = _axes(t, len(shape)) or [i for i, d in enumerate(shape) if d == 1]
    return _reshape(t, x, [-1 if d == DYNAMIC else d for i, d in enumerate(shape) if i not in axes])


@rule("Unsqueeze")
def unsqueeze(t, node):
    x = t.value(0)
    shape = [-1 if d == DYNAMIC else d for d in t.shape(x)]
    axes = t.static(1, "axes") if len(node.input) > 1 else t.attr("axes")
    rank = len(shape) + len(axes)
    for axis in sorted(int(a) % rank for a in axes):
        shape.insert(axis, 1)
    return _reshape(t, x, shape)


@rule("Concat")
def concat(t, node):
    values = [t.value(i) for i in range(len(node.input)) if t.input(i) is not None]
    values = [v for v in values if 0 not in t.shape(v)] or values[:1]
    return t.e.mir.concat(*values, axis=t.attr("axis") % t.rank(values[0]))


@rule("Slice")
def slice_(t, node):
    x = t.value(0)
    shape = t.shape(x)
    starts, ends = t.static(1, "starts"), t.static(2, "ends")
    axes = t.static(3, "axes")
    steps = t.static(4, "steps")
    axes = range(len(starts)) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    for start, end, axis, step in zip(starts, ends, axes, steps):
        axis = int(axis) % len(shape)
        size = shape[axis]
        if size == DYNAMIC:
            raise t.fail("a Slice of a dynamic dim is not supported")
        picked = np.arange(size)[slice(int(start), int(end), int(step))]  # ONNX clamps as Python
        if int(step) != 1 and picked.size:  # a strided or reversed slice: the picked elements
            x = t.e.mir.gather(x, t.constant(picked, "i64"), axis=axis)
        else:
            begin = int(picked[0]) if picked.size else 0
            x = t.e.mir.narrow(x, axis=axis, start=begin, len=picked.size)
    return x


@rule("Split")
def split(t, node):
    x = t.value(0)
    axis = t.attr("axis", 0) % t.rank(x)
    size = t.shape(x)[axis]
    sizes = t.static(1, "split") if len(node.input) > 1 and node.input[1] else t.attr("split")
    if sizes is None:
        if size == DYNAMIC:
            raise t.fail("an even Split of a dynamic dim is not supported")
        parts = t.attr("num_outputs", len(node.output))
        chunk = -(-size // parts)
        sizes = [min(chunk, size - i * chunk) for i in range(parts)]
    parts, start = [], 0
    for length in sizes:
        parts.append(t.e.mir.narrow(x, axis=axis, start=start, len=int(length)))
        start += int(length)
    return parts


@rule("Expand")
def expand(t, node):
    """ONNX Expand broadcasts both ways: the result has the broadcast of both shapes."""
    x = t.value(0)
    target = [int(d) for d in t.static(1, "the shape")]
    shape = t.shape(x)
    rank = max(len(shape), len(target))
    shape = [1] * (rank - len(shape)) + shape
    target = [1] * (rank - len(target)) + target
    result = [-1 if d == DYNAMIC and s == 1 else (d if s == 1 else s) for d, s in zip(shape, target)]
    if len(t.shape(x)) < rank:
        x = _reshape(t, x, [-1 if d == DYNAMIC else d for d in shape])
    return t.e.mir.expand(x, target_shape=result)


@rule("Shape")
def shape_(t, node):
    shape = t.shape(t.value(0))
    start, end = t.attr("start", 0), t.attr("end", None)
    dims = shape[start:end]
    if DYNAMIC in dims:
        raise t.fail("the Shape of a tensor with dynamic dims is not supported")
    return np.asarray(dims, dtype=np.int64)


@rule("ConstantOfShape")
def constant_of_shape(t, node):
    shape = [int(d) for d in t.static(0, "the shape")]
    value = t.attr("value")
    from onnx import numpy_helper

    fill = numpy_helper.to_array(value) if value is not None else np.zeros(1, np.float32)
    return np.full(shape, fill.reshape(()), dtype=fill.dtype)


@rule("Size")
def size(t, node):
    shape = t.shape(t.value(0))
    if DYNAMIC in shape:
        raise t.fail("the Size of a tensor with dynamic dims is not supported")
    return np.asarray(int(np.prod(shape)), dtype=np.int64)


@rule("Range")
def range_(t, node):
    """Folded when its inputs are compile-time values (the importer does that before any
    rule); with run-time bounds its length is data-dependent: the located error names the
    first such input, which `import_model(..., bind=...)` can fix."""
    for index, what in enumerate(("start", "limit", "delta")):
        t.static(index, f"a Range's {what}, on which its length depends,")
    raise t.fail("a Range with run-time bounds (a data-dependent shape) is not supported")


@rule("Trilu")
def trilu(t, node):
    """Keep `j - i >= k` (upper) or `j - i <= k` (lower) of the last two dims."""
    x = t.value(0)
    rows, cols = t.shape(x)[-2:]
    if DYNAMIC in (rows, cols):
        raise t.fail("a Trilu of dynamic dims is not supported")
    k = int(np.asarray(t.static(1, "k")).reshape(())) if t.input(1) is not None else 0
    i, j = np.indices((rows, cols))
    keep = (j - i >= k) if t.attr("upper", 1) else (j - i <= k)
    zero = t.e.mir.expand(t.constant(0, t.dtype(x)), target_shape=[rows, cols])
    return t.e.mir.where(t.constant(keep, "i1"), x, zero)


@rule("Pad")
def pad(t, node):
    """`pads` lists every padded axis' begin counts, then their end counts. Constant mode
    fills; `edge`, `reflect` and `wrap` (numpy's modes, as ONNX's reference) gather each
    padded axis at the indices `numpy.pad` gives its positions (static dims, no cropping)."""
    mode = t.attr("mode", b"constant")
    mode = mode.decode() if isinstance(mode, bytes) else mode
    if mode not in ("constant", "edge", "reflect", "wrap"):
        raise t.fail(f"Pad mode '{mode}' is not supported")
    x = t.value(0)
    rank = t.rank(x)
    pads = [int(p) for p in t.static(1, "pads")]
    axes = t.static(3, "axes")
    axes = list(range(rank)) if axes is None else [int(a) % rank for a in axes]
    per_axis = {axis: (pads[i], pads[i + len(axes)]) for i, axis in enumerate(axes)}
    if mode != "constant":
        for axis, (begin, end) in per_axis.items():
            dim = t.shape(x)[axis]
            if dim == DYNAMIC or min(begin, end) < 0:
                raise t.fail(f"Pad mode '{mode}' of a dynamic dim or with negative pads is not supported")
            if begin or end:
                positions = np.pad(np.arange(dim), (begin, end), mode=mode)
                x = t.e.mir.gather(x, t.constant(positions, "i64"), axis=axis)
        return x
    fill = t.value(2) if t.input(2) is not None else t.constant(0, t.dtype(x))
    return common.pad_constant(t.e, x, per_axis, t.e.mir.reshape(fill, new_shape=[]))


@rule("CenterCropPad")
def center_crop_pad(t, node):
    """Each of `axes` cropped or zero-padded to the constant `shape`, centred: the odd cell
    goes to the end (ONNX's reference)."""
    x = t.value(0)
    rank = t.rank(x)
    target = [int(s) for s in t.static(1, "shape")]
    axes = [a % rank for a in t.attr("axes", list(range(rank)))]
    pads = {}
    for axis, size in zip(axes, target):
        dim = t.shape(x)[axis]
        if dim == DYNAMIC:
            raise t.fail("CenterCropPad of a dynamic dim is not supported")
        if size < dim:
            x = t.e.mir.narrow(x, axis=axis, start=(dim - size) // 2, len=size)
        elif size > dim:
            pads[axis] = ((size - dim) // 2, size - dim - (size - dim) // 2)
    return common.pad_constant(t.e, x, pads, t.constant(0, t.dtype(x))) if pads else x


@rule("Compress")
def compress(t, node):
    """`numpy.compress` with a constant condition: a gather of its true positions (along
    `axis`, or of the flattened input without one)."""
    x = t.value(0)
    keep = np.flatnonzero(np.asarray(t.static(1, "condition")).astype(bool))
    axis = t.attr("axis")
    if axis is None:
        x = t.e.mir.reshape(x, new_shape=[-1])
        axis = 0
    return t.e.mir.gather(x, t.constant(keep, "i64"), axis=axis % t.rank(x))


@rule("Tile")
def tile(t, node):
    """Each axis `d` repeated `repeats[d]` times: the tensor concatenated with itself."""
    x = t.value(0)
    for axis, count in enumerate(int(r) for r in t.static(1, "repeats")):
        if count != 1:
            x = t.e.mir.concat(*[x] * count, axis=axis) if count > 0 else _empty_axis(t, x, axis)
    return x


def _empty_axis(t, x, axis: int):
    shape = t.shape(x)
    if DYNAMIC in shape:
        raise t.fail("Tile with a zero repeat of a dynamic shape is not supported")
    return t.constant(np.zeros([0 if d == axis else n for d, n in enumerate(shape)]), t.dtype(x))


@rule("DepthToSpace", "SpaceToDepth")
def depth_space(t, node):
    """NCHW blocks moved between channels and space by reshape, transpose, reshape, as
    ONNX's definition (DepthToSpace `mode` DCR or CRD)."""
    x = t.value(0)
    n, c, h, w = t.shape(x)
    if DYNAMIC in (c, h, w):
        raise t.fail(f"{node.op_type} of dynamic channels or spatial dims is not supported")
    b = t.attr("blocksize")
    n = -1 if n == DYNAMIC else n
    if node.op_type == "SpaceToDepth":
        x = _reshape(t, x, [n, c, h // b, b, w // b, b])
        x = t.e.mir.transpose(x, perm=[0, 3, 5, 1, 2, 4])
        return _reshape(t, x, [n, c * b * b, h // b, w // b])
    mode = t.attr("mode", b"DCR")
    if (mode.decode() if isinstance(mode, bytes) else mode) == "CRD":
        x, perm = _reshape(t, x, [n, c // (b * b), b, b, h, w]), [0, 1, 4, 2, 5, 3]
    else:
        x, perm = _reshape(t, x, [n, b, b, c // (b * b), h, w]), [0, 3, 4, 1, 5, 2]
    return _reshape(t, t.e.mir.transpose(x, perm=perm), [n, c // (b * b), h * b, w * b])


@rule("EyeLike")
def eye_like(t, node):
    """Ones on the diagonal shifted by `k`, of the input's static shape (dtype `dtype` or the input's)."""
    from rlx_xdsl.importers.onnx.types import dtype_name

    x = t.value(0)
    if DYNAMIC in t.shape(x):
        raise t.fail("EyeLike of a dynamic shape is not supported")
    dtype = dtype_name(t.attr("dtype"), t.where) if t.attr("dtype") is not None else t.dtype(x)
    return t.constant(np.eye(*t.shape(x), k=t.attr("k", 0)), dtype)
