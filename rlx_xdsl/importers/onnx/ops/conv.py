"""Conv, MaxPool (with dilations and ceil_mode), AveragePool, GlobalAveragePool/GlobalMaxPool on 1-D
(as 2-D of height 1) and 2-D NCHW tensors; `auto_pad` SAME_* and asymmetric pads are explicit padding."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dtypes import dtype_named
from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


def _window(t, spatial: list[int], kernel: list[int], fill=None):
    """Strides, symmetric pads and dilations of a 2-D window, and `x` with what the pads have
    beyond symmetric added explicitly (filled with the 0-d `fill`; None refuses asymmetric pads).
    `auto_pad` SAME_UPPER/SAME_LOWER pads to `ceil(in / stride)` outputs, the odd cell at the
    end/begin (ONNX)."""
    rank = len(kernel)
    strides = list(t.attr("strides", [1] * rank))
    dilations = list(t.attr("dilations", [1] * rank))
    auto_pad = t.attr("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        if DYNAMIC in spatial:
            raise t.fail(f"auto_pad {auto_pad} over dynamic spatial dims is not supported")
        total = [max((-(-n // s) - 1) * s + (k - 1) * d + 1 - n, 0)
                 for n, s, k, d in zip(spatial, strides, kernel, dilations)]  # fmt: skip
        small = [p // 2 for p in total]
        begin = small if auto_pad == "SAME_UPPER" else [p - q for p, q in zip(total, small)]
        pads = begin + [p - b for p, b in zip(total, begin)]
    else:
        pads = list(t.attr("pads", [0] * 2 * rank))
    begin, end = pads[:rank], pads[rank:]
    extra = {2 + i: (b - min(b, e), e - min(b, e)) for i, (b, e) in enumerate(zip(begin, end)) if b != e}
    if extra and fill is None:
        raise t.fail(f"asymmetric pads {pads} are not supported")
    return strides, [min(b, e) for b, e in zip(begin, end)], dilations, extra


def _as_2d(t, x):
    """A rank-3 `[N, C, L]` input as `[N, C, 1, L]` (1-D windows are 2-D ones of height 1)."""
    if t.rank(x) == 3:
        return t.e.mir.reshape(x, new_shape=[-1 if d == DYNAMIC else d for d in t.shape(x)[:2]] + [1, t.shape(x)[2]])
    if t.rank(x) != 4:
        raise t.fail(f"only 1-D and 2-D windows are supported (input of rank {t.rank(x)})")
    return x


def _one_d(values: list[int], height: int) -> list[int]:
    return [height, *values] if len(values) == 1 else list(values)


def _from_2d(t, out, rank: int):
    if rank == 4:
        return out
    n, c, _, length = t.shape(out)
    return t.e.mir.reshape(out, new_shape=[-1 if d == DYNAMIC else d for d in (n, c)] + [length])


@rule("Conv")
def conv(t, node):
    x_in, w = t.value(0), t.value(1)
    x = _as_2d(t, x_in)
    if t.rank(w) == 3:
        w = t.e.mir.reshape(w, new_shape=[*t.shape(w)[:2], 1, t.shape(w)[2]])
    kernel = t.shape(w)[2:]
    strides, pads, dilations, extra = _window(t, t.shape(x_in)[2:], t.shape(t.value(1))[2:], t.constant(0, t.dtype(x)))
    if extra:
        x = common.pad_constant(t.e, x, _shifted(extra, t.rank(x_in)), t.constant(0, t.dtype(x)))
    out = t.e.mir.conv(
        x, w, kernel_size=kernel, stride=_one_d(strides, 1), padding=_one_d(pads, 0), dilation=_one_d(dilations, 1),
        groups=t.attr("group", 1),
    )  # fmt: skip
    out = _from_2d(t, out, t.rank(x_in))
    if t.input(2) is None:
        return out
    return t.e.mir.add(out, t.e.mir.reshape(t.value(2), new_shape=[-1] + [1] * (t.rank(x_in) - 2)))


def _shifted(extra: dict[int, tuple[int, int]], rank: int) -> dict[int, tuple[int, int]]:
    """Pads of a 1-D window's axis 2 apply to the 2-D view's axis 3."""
    return {axis + (4 - rank): pads for axis, pads in extra.items()}


@rule("MaxPool", "AveragePool")
def pool(t, node):
    x_in = t.value(0)
    if node.op_type == "MaxPool" and t.rank(x_in) == 5 and not (len(node.output) > 1 and node.output[1]):
        return _max_pool_3d(t, x_in)
    x = _as_2d(t, x_in)
    if len(node.output) > 1 and node.output[1]:
        raise t.fail("the Indices output of MaxPool is not supported")
    kernel = list(t.attr("kernel_shape"))
    dtype = t.dtype(x)
    if node.op_type == "MaxPool":
        lowest = -np.inf if dtype_named(dtype).is_float else np.iinfo(dtype_named(dtype).numpy).min
        fill = t.constant(lowest, dtype)
    else:
        fill = t.constant(0, dtype)
    strides, pads, dilations, extra = _window(t, t.shape(x_in)[2:], kernel, fill)
    excluding = node.op_type == "AveragePool" and not t.attr("count_include_pad", 0)
    if excluding and (extra or t.attr("ceil_mode", 0)) and all(d == 1 for d in dilations):
        return _from_2d(t, _mean_of_cells(t, x, t.rank(x_in), kernel, strides, pads, extra), t.rank(x_in))
    if extra:
        x = common.pad_constant(t.e, x, _shifted(extra, t.rank(x_in)), fill)
    kernel, strides, pads, dilations = _one_d(kernel, 1), _one_d(strides, 1), _one_d(pads, 0), _one_d(dilations, 1)
    if node.op_type == "MaxPool":  # dilations and ceil_mode through common.max_pool
        out = common.max_pool(t.e, x, kernel, strides, pads, dilations, bool(t.attr("ceil_mode", 0)), dtype)
        return _from_2d(t, out, t.rank(x_in))
    if dilations != [1, 1] or t.attr("ceil_mode", 0):
        raise t.fail("average pooling with dilations, or with ceil_mode counting its padding, is not supported")
    if t.attr("count_include_pad", 0) and pads != [0, 0]:  # padded cells count: explicit zeros
        x = common.pad_constant(t.e, x, {2: (pads[0], pads[0]), 3: (pads[1], pads[1])}, fill)
        pads = [0, 0]
    out = t.e.mir.pool(x, kind="mean", kernel_size=kernel, stride=strides, padding=pads)
    return _from_2d(t, out, t.rank(x_in))


def _max_pool_3d(t, x):
    """3-D max pooling: the depth windows' taps gathered (depth padded with the lowest value),
    each tap's `[H, W]` plane max-pooled in 2-D, the max over the taps."""
    e = t.e.mir
    dtype = t.dtype(x)
    if DYNAMIC in t.shape(x):
        raise t.fail("3-D max pooling of a tensor with dynamic dims is not supported")
    n, c, depth, h, w = t.shape(x)
    kernel = list(t.attr("kernel_shape"))
    info = dtype_named(dtype)
    lowest = t.constant(-np.inf if info.is_float else np.iinfo(info.numpy).min, dtype)
    strides, pads, dilations, extra = _window(t, [depth, h, w], kernel, lowest)
    if extra:
        x = common.pad_constant(t.e, x, extra, lowest)
        depth = t.shape(x)[2]
    ceil = bool(t.attr("ceil_mode", 0))
    out_depth = common.pooled_size(depth, kernel[0], strides[0], pads[0], dilations[0], ceil)
    end = (out_depth - 1) * strides[0] + dilations[0] * (kernel[0] - 1) + 1 - depth - pads[0]
    x = common.pad_constant(t.e, x, {2: (pads[0], end)}, lowest)
    taps = np.array([[o * strides[0] + j * dilations[0] for o in range(out_depth)] for j in range(kernel[0])])
    x = e.gather(x, t.constant(taps.ravel(), "i64"), axis=2)
    x = e.reshape(x, new_shape=[n, c * taps.size, h, w])
    x = common.max_pool(t.e, x, kernel[1:], strides[1:], pads[1:], dilations[1:], ceil, dtype)
    oh, ow = t.shape(x)[2:]
    x = e.reshape(x, new_shape=[n, c, kernel[0], out_depth, oh, ow])
    return e.reduce(x, kind="max", axes=[2], keep_dim=False)


def _mean_of_cells(t, x, rank: int, kernel, strides, pads, extra):
    """Average pooling over the input cells only (`count_include_pad = 0`) with asymmetric
    pads or `ceil_mode` (windows rounded up unless the last would start in the end padding):
    the window mean of the zero-padded input over that of the padded ones."""
    spatial = t.shape(x)[4 - (rank - 2) :]
    if DYNAMIC in spatial:
        raise t.fail("average pooling with ceil_mode or asymmetric pads over dynamic dims is not supported")
    bounds = {}
    for i, (n, k, s, p) in enumerate(zip(spatial, kernel, strides, pads)):
        begin, end = p + extra.get(2 + i, (0, 0))[0], p + extra.get(2 + i, (0, 0))[1]
        if t.attr("ceil_mode", 0):
            out = -(-(n + begin + end - k) // s) + 1
            if (out - 1) * s >= n + begin:
                out -= 1
            end = (out - 1) * s + k - n - begin
        bounds[2 + i] = (begin, end)
    bounds = _shifted(bounds, rank)
    dtype = t.dtype(x)
    zero = t.constant(0, dtype)
    ones = t.constant(np.ones([1, 1, *t.shape(x)[2:]]), dtype)
    kernel, strides = _one_d(list(kernel), 1), _one_d(list(strides), 1)

    def window_mean(v):
        padded = common.pad_constant(t.e, v, bounds, zero)
        return t.e.mir.pool(padded, kind="mean", kernel_size=kernel, stride=strides, padding=[0, 0])

    return t.e.mir.div(window_mean(x), window_mean(ones))


@rule("LpPool")
def lp_pool(t, node):
    """`(sum over the window of |x|^p)^(1/p)`: the window sum is `mir.pool`'s mean of the
    explicitly zero-padded `|x|^p` times the window's size."""
    x_in = t.value(0)
    x = _as_2d(t, x_in)
    dtype = t.dtype(x)
    kernel = list(t.attr("kernel_shape"))
    zero = t.constant(0, dtype)
    strides, pads, dilations, extra = _window(t, t.shape(x_in)[2:], kernel, zero)
    if any(d != 1 for d in dilations):
        raise t.fail("LpPool with dilations is not supported")
    p = t.attr("p", 2)
    powered = t.e.mir.mul(x, x) if p == 2 else t.e.mir.pow(t.e.mir.abs(x), t.constant(p, dtype))
    both = {2 + i: (pad, pad) for i, pad in enumerate(pads)}
    for axis, (b, e) in extra.items():
        both[axis] = (both[axis][0] + b, both[axis][1] + e)
    padded = common.pad_constant(t.e, powered, _shifted(both, t.rank(x_in)), zero)
    kernel, strides = _one_d(kernel, 1), _one_d(strides, 1)
    mean = t.e.mir.pool(padded, kind="mean", kernel_size=kernel, stride=strides, padding=[0, 0])
    total = t.e.mir.mul(mean, t.constant(kernel[0] * kernel[1], dtype))
    out = t.e.mir.sqrt(total) if p == 2 else t.e.mir.pow(total, t.constant(1 / p, dtype))
    return _from_2d(t, out, t.rank(x_in))


@rule("ConvTranspose")
def conv_transpose(t, node):
    """The gradient of a convolution with respect to its input, as one `mir.conv`: `x` with
    `stride - 1` zeros between elements, padded by `dilation * (kernel - 1) - pad` on each
    side (plus `output_padding`, or what `output_shape` asks, at the end), convolved at
    stride 1 with the spatially flipped kernel, its `[C_in, C_out / group]` blocks swapped.
    Pads follow ONNX's reference (`auto_pad` SAME_UPPER puts the odd cell at the end; with
    `output_shape` and no pads, SAME_LOWER at the start). 1-D and 2-D, static shapes."""
    e = t.e.mir
    x_in, w_in = t.value(0), t.value(1)
    x, w = _as_2d(t, x_in), t.value(1)
    if t.rank(w) == 3:
        w = e.reshape(w, new_shape=[*t.shape(w)[:2], 1, t.shape(w)[2]])
    spatial, kernel = t.shape(x_in)[2:], t.shape(w_in)[2:]
    if DYNAMIC in t.shape(x_in):
        raise t.fail("ConvTranspose of a tensor with dynamic dims is not supported")
    rank, dtype, groups = len(spatial), t.dtype(x), t.attr("group", 1)
    strides = list(t.attr("strides", [1] * rank))
    dilations = list(t.attr("dilations", [1] * rank))
    extra = list(t.attr("output_padding", [0] * rank))
    natural = [s * (n - 1) + o + (k - 1) * d + 1 for n, s, o, k, d in zip(spatial, strides, extra, kernel, dilations)]
    auto_pad = t.attr("auto_pad", b"NOTSET")
    auto_pad = auto_pad.decode() if isinstance(auto_pad, bytes) else auto_pad
    output_shape = t.attr("output_shape")
    pads = t.attr("pads")
    if pads is None and auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        wanted = list(output_shape) if output_shape is not None else [n * s for n, s in zip(spatial, strides)]
        total = [a - b for a, b in zip(natural, wanted)]
        small = [p // 2 for p in total]
        begin = small if auto_pad == "SAME_UPPER" else [p - q for p, q in zip(total, small)]
        pads = begin + [p - b for p, b in zip(total, begin)]
    pads = list(pads) if pads is not None else [0] * 2 * rank
    begin, end = pads[:rank], pads[rank:]
    if output_shape is not None and auto_pad not in ("SAME_UPPER", "SAME_LOWER"):  # the rest at the end
        end = [n - b - size for n, b, size in zip(natural, begin, output_shape)]
    # x with stride - 1 zeros between elements: [.., n, 1] padded to [.., n, s], flattened, cut
    n_, c_ = t.shape(x)[:2]
    h, wd = t.shape(x)[2:]
    sh, sw = _one_d(strides, 1)
    x = e.reshape(x, new_shape=[n_, c_, h, 1, wd, 1])
    zero = t.constant(0, dtype)
    x = common.pad_constant(t.e, x, {3: (0, sh - 1), 5: (0, sw - 1)}, zero)
    x = e.reshape(x, new_shape=[n_, c_, h * sh, wd * sw])
    x = e.narrow(e.narrow(x, axis=2, start=0, len=(h - 1) * sh + 1), axis=3, start=0, len=(wd - 1) * sw + 1)
    full = {2 + i: (d * (k - 1) - b, d * (k - 1) - f + o)
            for i, (d, k, b, f, o) in enumerate(zip(dilations, kernel, begin, end, extra))}  # fmt: skip
    x = common.pad_constant(t.e, x, _shifted(full, t.rank(x_in)), zero)
    c_in, c_out_g, kh, kw = t.shape(w)
    w = e.reshape(w, new_shape=[groups, c_in // groups, c_out_g, kh, kw])
    w = e.reshape(e.transpose(w, perm=[0, 2, 1, 3, 4]), new_shape=[groups * c_out_g, c_in // groups, kh, kw])
    for axis, size in ((2, kh), (3, kw)):
        if size > 1:
            w = e.gather(w, t.constant(np.arange(size - 1, -1, -1), "i64"), axis=axis)
    out = e.conv(x, w, kernel_size=[kh, kw], stride=[1, 1], padding=[0, 0], dilation=_one_d(dilations, 1), groups=groups)
    out = _from_2d(t, out, t.rank(x_in))
    if t.input(2) is None:
        return out
    return e.add(out, e.reshape(t.value(2), new_shape=[-1] + [1] * rank))


@rule("GlobalAveragePool", "GlobalMaxPool")
def global_pool(t, node):
    x = t.value(0)
    kind = "mean" if node.op_type == "GlobalAveragePool" else "max"
    return t.e.mir.reduce(x, kind=kind, axes=list(range(2, t.rank(x))), keep_dim=True)
