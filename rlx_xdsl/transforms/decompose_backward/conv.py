"""Decompositions of the convolution and pooling gradients.

* `conv_backward_input` is a convolution too: dy spread out by the stride (zeros
  between its rows and columns), with the flipped kernel whose in/out channels
  are swapped within each group, stride 1, the forward's dilation and padding
  `dilation (k - 1) - padding` (a negative one crops instead).
* `conv_backward_weight` is a convolution of x with dy as the kernel, batch and
  channels exchanged: the forward's stride becomes the dilation and its
  dilation the stride; groups keep their channels by folding them into the batch.
* `pool_backward` gathers each window's cells with `mir.iota`-built positions,
  picks the first real maximum (max) or shares dy over the real cells (mean),
  and adds the cells back with two `scatter_add`s, one per spatial axis.

They need static spatial dims (the positions and strides are built from them);
the batch may be dynamic.
"""

from __future__ import annotations

from xdsl.dialects.builtin import i64
from xdsl.ir import Operation, SSAValue

from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.backward import (
    ConvBackwardInputOp,
    ConvBackwardWeightOp,
    PoolBackwardOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import (
    dtype_of,
    keep_where,
    logical_and,
    require_static,
    reshape_to,
    scalar,
    shape_of,
    total,
    transposed,
    zeros_like,
)

H, W = 2, 3
"""The spatial axes of NCHW."""


def spread(e: Emitter, op: Operation, value: SSAValue, axis: int, stride: int, length: int) -> SSAValue:
    """The first `length` entries along `axis` of `value` with `stride - 1` zeros after each entry."""
    shape = list(shape_of(value))
    if stride > 1:
        cells = reshape_to(e, op, value, [*shape[: axis + 1], 1, *shape[axis + 1 :]])
        gaps = zeros_like(e, cells)
        if stride > 2:
            gap_shape = [-1] * len(shape_of(cells))
            gap_shape[axis + 1] = stride - 1
            gaps = e.mir.expand(gaps, target_shape=gap_shape)
        joined = e.mir.concat(cells, gaps, axis=axis + 1)
        value = reshape_to(e, op, joined, [*shape[:axis], shape[axis] * stride, *shape[axis + 1 :]])
    if shape_of(value)[axis] != length:
        value = e.mir.narrow(value, axis=axis, start=0, len=length)
    return value


def flipped(e: Emitter, w: SSAValue) -> SSAValue:
    """The kernel reversed along both spatial axes: its one-wide slices concatenated in
    reverse order (shape ops only, so a backend without `mir.gather` runs it)."""
    for axis in (H, W):
        size = shape_of(w)[axis]
        if size > 1:
            w = e.mir.concat(*(e.mir.narrow(w, axis=axis, start=i, len=1) for i in reversed(range(size))), axis=axis)
    return w


@DECOMPOSITIONS.register(ConvBackwardInputOp)
def conv_backward_input(e: Emitter, op: ConvBackwardInputOp) -> SSAValue:
    groups = op.groups.value.data
    require_static(op, "dy's spatial dims", shape_of(op.dy)[2:])
    require_static(op, "w's shape", shape_of(op.w))
    value, padding = op.dy, []
    windows = zip(
        (H, W),
        op.pair("input_size"),
        op.pair("kernel_size"),
        op.pair("stride"),
        op.pair("padding"),
        op.pair("dilation"),
    )
    for axis, size, kernel, stride, pad, dilation in windows:
        out_len = shape_of(op.dy)[axis]
        reach = dilation * (kernel - 1)
        unread = size - ((out_len - 1) * stride + reach + 1 - 2 * pad)  # rows after the last window
        length = (out_len - 1) * stride + 1 + unread
        value = spread(e, op, value, axis, stride, length)
        full = reach - pad
        if full < 0:  # the forward padded more than the kernel reaches: crop instead
            value = e.mir.narrow(value, axis=axis, start=-full, len=length + 2 * full)
        padding.append(max(full, 0))
    cout, per_group, kh, kw = shape_of(op.w)
    grouped = e.mir.reshape(flipped(e, op.w), new_shape=[groups, cout // groups, per_group, kh, kw])
    swapped = e.mir.transpose(grouped, perm=[0, 2, 1, 3, 4])
    weights = e.mir.reshape(swapped, new_shape=[groups * per_group, cout // groups, kh, kw])
    return e.mir.conv(
        value, weights, kernel_size=[kh, kw], stride=[1, 1], padding=padding,
        dilation=list(op.pair("dilation")), groups=groups,
    )  # fmt: skip


@DECOMPOSITIONS.register(ConvBackwardWeightOp)
def conv_backward_weight(e: Emitter, op: ConvBackwardWeightOp) -> SSAValue:
    groups = op.groups.value.data
    n, cin, height, width = shape_of(op.x)
    require_static(op, "x's channel and spatial dims", [cin, height, width])
    require_static(op, "dy's spatial dims", shape_of(op.dy)[2:])
    per_group = cin // groups
    # x as a batch of its per-group channels, the (group, sample) pairs as channels
    blocks = reshape_to(e, op, op.x, [n, groups, per_group, height, width])
    images = e.mir.transpose(blocks, perm=[2, 1, 0, 3, 4])
    images = reshape_to(e, op, images, [per_group, DYNAMIC if n == DYNAMIC else groups * n, height, width])
    kernels = e.mir.transpose(op.dy, perm=[1, 0, 2, 3])
    grad = e.mir.conv(
        images, kernels, kernel_size=list(shape_of(op.dy)[2:]), stride=list(op.pair("dilation")),
        padding=list(op.pair("padding")), dilation=list(op.pair("stride")), groups=groups,
    )  # fmt: skip
    for axis, kernel in zip((H, W), op.pair("kernel_size")):
        if shape_of(grad)[axis] != kernel:  # stride leftovers reach past the kernel: drop them
            grad = e.mir.narrow(grad, axis=axis, start=0, len=kernel)
    return e.mir.transpose(grad, perm=[1, 0, 2, 3])


def window_positions(
    e: Emitter, out_len: int, kernel: int, stride: int, pad: int, size: int
) -> tuple[SSAValue, SSAValue]:
    """`(positions, real)`, both `[out_len, kernel]`: the input index of each window cell,
    clamped into `[0, size)`, and whether it is a real (unpadded) cell."""
    ramp = e.mir.mul(e.mir.iota([out_len, kernel], i64, dimension=0), e.mir.constant(stride, i64))
    index = e.mir.add(ramp, e.mir.iota([out_len, kernel], i64, dimension=1))
    if pad:
        index = e.mir.sub(index, e.mir.constant(pad, i64))
    real = logical_and(
        e,
        e.mir.compare(index, e.mir.constant(0, i64), "ge"),
        e.mir.compare(index, e.mir.constant(size, i64), "lt"),
    )
    clamped = e.mir.max(e.mir.min(index, e.mir.constant(size - 1, i64)), e.mir.constant(0, i64))
    return clamped, real


def first_maximum(e: Emitter, patches: SSAValue, real: SSAValue, kernel: tuple[int, int]) -> SSAValue:
    """i1 `[N, C, Ho, kh, Wo, kw]`: the first real cell (row-major in the window) equal to its max."""
    kh, kw = kernel
    masked = e.mir.where(real, patches, scalar(e, float("-inf"), patches))
    window_max = e.mir.reduce(masked, kind="max", axes=[3, 5], keep_dim=True)
    is_max = logical_and(e, real, e.mir.compare(patches, window_max, "eq"))
    order = e.mir.add(
        e.mir.mul(e.mir.iota([kh, kw], i64, dimension=0), e.mir.constant(kw, i64)),
        e.mir.iota([kh, kw], i64, dimension=1),
    )
    order = e.mir.reshape(order, new_shape=[1, 1, 1, kh, 1, kw])
    candidates = e.mir.where(is_max, order, e.mir.constant(kh * kw, i64))
    first = e.mir.reduce(candidates, kind="min", axes=[3, 5], keep_dim=True)
    return e.mir.compare(order, first, "eq")


def scatter_axis(
    e: Emitter, op: Operation, cells: SSAValue, perm: list[int], positions: SSAValue, size: int
) -> SSAValue:
    """Move the `(window, cell)` axes of `cells` to the front (`perm`), flatten them and add each
    row into `size` rows at its `positions`."""
    moved = e.mir.transpose(cells, perm=perm)
    shape = shape_of(moved)
    rows = reshape_to(e, op, moved, [shape[0] * shape[1], *shape[2:]])
    return e.mir.scatter_add(rows, e.mir.reshape(positions, new_shape=[-1]), dim_size=size)


@DECOMPOSITIONS.register(PoolBackwardOp)
def pool_backward(e: Emitter, op: PoolBackwardOp) -> SSAValue:
    n, channels, height, width = shape_of(op.x)
    require_static(op, "x's spatial dims", [height, width])
    ho, wo = shape_of(op.dy)[2:]
    require_static(op, "dy's spatial dims", [ho, wo])
    (kh, kw), (sh, sw), (ph, pw) = op.pair("kernel_size"), op.pair("stride"), op.pair("padding")
    rows, real_rows = window_positions(e, ho, kh, sh, ph, height)
    cols, real_cols = window_positions(e, wo, kw, sw, pw, width)
    patches = e.mir.gather(e.mir.gather(op.x, rows, axis=H), cols, axis=4)  # [N, C, Ho, kh, Wo, kw]
    real = logical_and(
        e,
        e.mir.reshape(real_rows, new_shape=[1, 1, ho, kh, 1, 1]),
        e.mir.reshape(real_cols, new_shape=[1, 1, 1, 1, wo, kw]),
    )
    dy = reshape_to(e, op, op.dy, [n, channels, ho, 1, wo, 1])
    if op.kind.data == ReduceKind.MAX:
        cells = keep_where(e, first_maximum(e, patches, real, (kh, kw)), dy)
    else:
        et = dtype_of(op.dy)
        count_rows = total(e, e.mir.cast(real_rows, et), [1], keep_dim=True)
        count_cols = total(e, e.mir.cast(real_cols, et), [1], keep_dim=True)
        count = e.mir.mul(
            e.mir.reshape(count_rows, new_shape=[1, 1, ho, 1, 1, 1]),
            e.mir.reshape(count_cols, new_shape=[1, 1, 1, 1, wo, 1]),
        )
        cells = keep_where(e, real, e.mir.div(dy, count))
    by_col = scatter_axis(e, op, cells, [4, 5, 0, 1, 2, 3], cols, width)  # [W, N, C, Ho, kh]
    by_row = scatter_axis(e, op, by_col, [3, 4, 0, 1, 2], rows, height)  # [H, W, N, C]
    return transposed(e, by_row, [2, 3, 0, 1])
