"""Decompositions of the convolution and pooling gradients.

* `conv_backward_input` is the gradient of each window cell (`dy · w`, a batched
  matmul per group) added back tap by tap into the padded input: never a product
  with an inserted or padding zero.
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


def placed(e: Emitter, value: SSAValue, axis: int, before: int, total: int) -> SSAValue:
    """`value` with `before` zeros ahead of it along `axis` and zeros after it up to `total`."""

    def zeros(count: int) -> list[SSAValue]:
        if count <= 0:
            return []
        edge = zeros_like(e, e.mir.narrow(value, axis=axis, start=0, len=1))
        shape = [-1] * len(shape_of(value))
        shape[axis] = count
        return [e.mir.expand(edge, target_shape=shape) if count > 1 else edge]

    parts = [*zeros(before), value, *zeros(total - before - shape_of(value)[axis])]
    return e.mir.concat(*parts, axis=axis) if len(parts) > 1 else value


@DECOMPOSITIONS.register(ConvBackwardInputOp)
def conv_backward_input(e: Emitter, op: ConvBackwardInputOp) -> SSAValue:
    """The interpreter's transposed convolution (`transposed_conv`): each window cell's
    gradient `dy · w` (one batched matmul per group), then tap by tap, in row-major order,
    the cells of tap (a, b) spread out by the stride, placed at `(a dh, b dw)` in the padded
    input and added; the padding cropped. Only real products are summed: a conv of dy
    spread out by the stride would multiply the inserted and padding zeros by the weights
    (NaN where a weight is ±inf or NaN)."""
    groups = op.groups.value.data
    n, cout, ho, wo = shape_of(op.dy)
    require_static(op, "dy's spatial dims", [ho, wo])
    require_static(op, "w's shape", shape_of(op.w))
    _, per_group, kh, kw = shape_of(op.w)
    cin = groups * per_group
    # [N, G, Ho*Wo, Cout/G] @ [G, Cout/G, Cin/G*kh*kw]: the gradient of each window cell
    dy = reshape_to(e, op, op.dy, [n, groups, cout // groups, ho * wo])
    cells = e.mir.matmul(e.mir.transpose(dy, perm=[0, 1, 3, 2]), e.mir.reshape(op.w, new_shape=[groups, cout // groups, -1]))
    cells = reshape_to(e, op, cells, [n, groups, ho, wo, per_group, kh, kw])
    cells = reshape_to(e, op, e.mir.transpose(cells, perm=[0, 1, 4, 5, 6, 2, 3]), [n, cin, kh, kw, ho, wo])
    (sh, sw), (dh, dw), (ph, pw) = op.pair("stride"), op.pair("dilation"), op.pair("padding")
    cells = spread(e, op, spread(e, op, cells, 4, sh, (ho - 1) * sh + 1), 5, sw, (wo - 1) * sw + 1)
    (h, width) = op.pair("input_size")
    total = None
    for a in range(kh):
        for b in range(kw):
            tap = e.mir.narrow(e.mir.narrow(cells, axis=2, start=a, len=1), axis=3, start=b, len=1)
            tap = reshape_to(e, op, tap, [n, cin, *shape_of(tap)[4:]])
            tap = placed(e, placed(e, tap, H, a * dh, h + 2 * ph), W, b * dw, width + 2 * pw)
            total = e.mir.add(zeros_like(e, tap) if total is None else total, tap)
    for axis, pad, size in ((H, ph, h), (W, pw, width)):
        if pad:
            total = e.mir.narrow(total, axis=axis, start=pad, len=size)
    return total


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
