"""Lowering of MIR conv and pool on NCHW tensors.

Padding is a `tensor.pad` (zeros for conv and mean, the lowest value for max).
A plain f32/f64 convolution is `linalg.conv_2d_nchw_fchw`; grouped or mixed-
precision ones are a `linalg.generic` over `[N, G, Cout/G, Ho, Wo]` with the
window read at `o * stride + k * dilation`. Pooling is a window reduction; the
mean divides by the number of real (unpadded) cells of each window, computed
from the loop indices.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i64
from xdsl.dialects.linalg.ops import Conv2DNchwFchwOp
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from rlx_xdsl.conversions.mir_to_linalg.contraction import contract
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import (
    Scalars,
    accumulator,
    lowest_value,
)
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, Dim, identity
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp, WindowOperation


def _window_sizes(lw: Lowering, op: WindowOperation, x: SSAValue) -> list[Dim]:
    """`[Ho, Wo]` of the (padded) input `x`: `(size - dilation (kernel - 1) - 1) // stride + 1`."""
    out: list[Dim] = []
    for size, kernel, stride, dilation in zip(
        lw.dims(x)[2:], op.pair("kernel_size"), op.pair("stride"), op.dilation_pair()
    ):
        extent = dilation * (kernel - 1) + 1
        if isinstance(size, int):
            out.append((size - extent) // stride + 1)
        else:
            span = lw.emit(arith.SubiOp(size, lw.s.index_constant(extent)))
            out.append(lw.emit(arith.AddiOp(lw.quotient(span, stride), lw.s.index_constant(1))))
    return out


def _window_map(
    n_loops: int, batch: Sequence[int], out_hw: tuple[int, int], k_hw: tuple[int, int], op
) -> AffineMap:
    """Reads `x[batch..., oh * sh + kh * dh, ow * sw + kw * dw]`."""
    (sh, sw), (dh, dw) = op.pair("stride"), op.dilation_pair()
    d = AffineExpr.dimension
    h = d(out_hw[0]) * sh + d(k_hw[0]) * dh
    w = d(out_hw[1]) * sw + d(k_hw[1]) * dw
    return AffineMap(n_loops, 0, (*(d(b) for b in batch), h, w))


def _padded(lw: Lowering, op: WindowOperation, x: SSAValue, fill: float | int) -> SSAValue:
    """`x` padded, then cut to the rows and columns the windows read.

    With a stride, the last rows may be read by no window. Cutting them keeps every
    window index in range of its dim, which IREE's unit-dim folding relies on (it
    mis-folds `oh * stride + kh` when a unit `oh` leaves rows unread).
    """
    ph, pw = op.pair("padding")
    padded = lw.pad(x, [0, 0, ph, pw], [0, 0, ph, pw], fill, lw.operand_dtype(0))
    dims = lw.dims(padded)
    if not all(isinstance(d, int) for d in dims[2:]):
        return padded
    used = []
    for size, kernel, stride, dilation in zip(
        dims[2:], op.pair("kernel_size"), op.pair("stride"), op.dilation_pair()
    ):
        extent = dilation * (kernel - 1) + 1
        used.append(((size - extent) // stride) * stride + extent)
    if used == dims[2:]:
        return padded
    return lw.extract_slice(padded, [0, 0, 0, 0], [*dims[:2], *used])


@LOWERINGS.register(ConvOp)
def lower_conv(lw: Lowering, op: ConvOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    x = _padded(lw, op, op.x, 0)
    n = lw.dim(x, 0)
    cout, cin_g, kh, kw = lw.dims(op.w)
    ho, wo = _window_sizes(lw, op, x)
    groups = op.groups.value.data
    same = lw.operand_dtype(0) == lw.operand_dtype(1) == dt
    if groups == 1 and same and dt.name in ("f32", "f64"):
        init = lw.full([n, cout, ho, wo], dt, 0)
        attrs = {
            name: DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), list(values))
            for name, values in (("strides", op.pair("stride")), ("dilations", op.dilation_pair()))
        }
        return [
            lw.emit(
                Conv2DNchwFchwOp(
                    [x, op.w], [init], [init.type], strides=attrs["strides"], dilations=attrs["dilations"]
                )
            )
        ]
    # Loops: n, g, f (output channel in group), oh, ow | c (input channel in group), kh, kw.
    per_group_out = lw.quotient(cout, groups)
    xg = lw.expand(x, [[0], [1, 2], [3], [4]], [n, groups, cin_g, *lw.dims(x)[2:]])
    wg = lw.expand(op.w, [[0, 1], [2], [3], [4]], [groups, per_group_out, cin_g, kh, kw])
    x_map = _window_map(8, [0, 1, 5], (3, 4), (6, 7), op)
    w_map = AffineMap(8, 0, tuple(AffineExpr.dimension(i) for i in (1, 2, 5, 6, 7)))
    out = contract(
        lw,
        [(xg, lw.operand_dtype(0), x_map), (wg, lw.operand_dtype(1), w_map)],
        [n, groups, per_group_out, ho, wo, cin_g, kh, kw],
        [5, 6, 7],
        dt,
    )
    return [lw.collapse(out, [[0], [1, 2], [3], [4]])]


@LOWERINGS.register(PoolOp)
def lower_pool(lw: Lowering, op: PoolOp) -> Sequence[SSAValue]:
    """A window reduction over loops (n, c, oh, ow | kh, kw); a `[kh, kw]` window
    operand gives the kernel loops their sizes, as linalg's named pooling ops do."""
    dt = lw.result_dtype()
    is_max = op.kind.data == ReduceKind.MAX
    acc = dt if is_max else accumulator(dt)
    x = _padded(lw, op, op.x, lowest_value(dt) if is_max else 0)
    n, c, *_ = lw.dims(x)
    ho, wo = _window_sizes(lw, op, x)
    kh, kw = op.pair("kernel_size")
    window = lw.empty([kh, kw], dt)
    inputs = [
        (x, _window_map(6, [0, 1], (2, 3), (4, 5), op)),
        (window, AffineMap(6, 0, (AffineExpr.dimension(4), AffineExpr.dimension(5)))),
    ]
    if is_max:
        combine = Scalars.max
        start = lowest_value(dt)
    else:
        combine = Scalars.add
        start = 0
    total = lw.reduce(
        inputs, [n, c, ho, wo, kh, kw], [4, 5], acc, start,
        lambda s, v, _, t: combine(s, t, s.cast(v, dt, acc), acc),
    )  # fmt: skip
    if is_max:
        return [total]
    return [_divide_by_window_cells(lw, op, total, acc, dt)]


def _divide_by_window_cells(lw: Lowering, op: PoolOp, total: SSAValue, acc, dt) -> SSAValue:
    """`total / cells` where cells counts the window's positions inside the unpadded input."""
    height, width = lw.dims(op.x)[2:]
    (kh, kw), (sh, sw), (ph, pw) = op.pair("kernel_size"), op.pair("stride"), op.pair("padding")

    def cells(s: Scalars, out_index: SSAValue, size: Dim, kernel: int, stride: int, pad: int) -> SSAValue:
        start = s.emit(
            arith.SubiOp(s.emit(arith.MuliOp(out_index, s.index_constant(stride))), s.index_constant(pad))
        )
        end = s.emit(arith.AddiOp(start, s.index_constant(kernel)))
        limit = s.index_constant(size) if isinstance(size, int) else size
        first = s.emit(arith.MaxSIOp(start, s.index_constant(0)))
        return s.emit(arith.SubiOp(s.emit(arith.MinSIOp(end, limit)), first))

    def body(s: Scalars, t: SSAValue, _: SSAValue) -> SSAValue:
        rows = cells(s, s.loop_index(2), height, kh, sh, ph)
        cols = cells(s, s.loop_index(3), width, kw, sw, pw)
        count = s.from_index(s.emit(arith.MuliOp(rows, cols)), acc)
        return s.cast(s.div(t, count, acc), acc, dt)

    init = lw.empty(lw.dims(total), dt)
    return lw.generic([(total, identity(4))], [(init, identity(4))], [PARALLEL] * 4, body)[0]
