"""2-D convolution and pooling on NCHW tensors; constant padding.

A 1-D convolution (`[N, C, L]`, Whisper's audio stem) is the 2-D one over a height of
one: the input and kernel gain a unit dim and the result loses it again.
"""

from __future__ import annotations

import torch

from rlx_xdsl.importers import common
from rlx_xdsl.importers.torch.ops.shape import reshape_to
from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


def _pair(v, default):
    if v is None or (isinstance(v, list | tuple) and len(v) == 0):
        v = default
    v = list(v) if isinstance(v, list | tuple) else [v]
    return v * 2 if len(v) == 1 else v


@rule(aten.convolution.default)
def convolution(t, node):
    x, w, bias, stride, padding, dilation, transposed, _output_padding, groups = node.args
    if transposed:
        raise t.fail("transposed convolution is not supported")
    if t.rank(x) == 3:
        return _conv1d(t, node)
    if t.rank(x) != 4:
        raise t.fail(f"only 1-D and 2-D convolution are supported (input of rank {t.rank(x)})")
    kernel = t.shape(w)[2:]
    out = t.e.mir.conv(
        t.value(x),
        t.value(w),
        kernel_size=kernel,
        stride=_pair(stride, 1),
        padding=_pair(padding, 0),
        dilation=_pair(dilation, 1),
        groups=groups,
    )
    if bias is None:
        return out
    return t.e.mir.add(out, t.e.mir.reshape(t.value(bias), new_shape=[-1, 1, 1]))


def _conv1d(t, node):
    x, w, bias, stride, padding, dilation, _transposed, _output_padding, groups = node.args
    (n, c, length), (out_c, in_c, k) = t.shape(x), t.shape(w)
    if DYNAMIC in (c, out_c, in_c, k):
        raise t.fail("a 1-D convolution with dynamic channels or kernel is not supported")
    image = reshape_to(t, t.value(x), [n, c, 1, length])
    kernel = t.e.mir.reshape(t.value(w), new_shape=[out_c, in_c, 1, k])
    out = t.e.mir.conv(
        image,
        kernel,
        kernel_size=[1, k],
        stride=[1, *_pair(stride, 1)[:1]],
        padding=[0, *_pair(padding, 0)[:1]],
        dilation=[1, *_pair(dilation, 1)[:1]],
        groups=groups,
    )
    out = t.e.mir.reshape(out, new_shape=[-1 if d == DYNAMIC else d for d in t.shape(node)])
    if bias is None:
        return out
    return t.e.mir.add(out, t.e.mir.reshape(t.value(bias), new_shape=[-1, 1]))


@rule(aten.max_pool2d_with_indices.default)
def max_pool(t, node):
    """Output 0 only: the indices output serves max-unpooling and gradients. Dilation and
    `ceil_mode` through `common.max_pool`."""
    args = list(node.args) + [None] * (6 - len(node.args))
    x, kernel, stride, padding, dilation, ceil_mode = args[:6]
    if t.rank(x) != 4:
        raise t.fail(f"only 2-D max pooling of NCHW tensors is supported (input of rank {t.rank(x)})")
    kernel = _pair(kernel, None)
    out = common.max_pool(
        t.e, t.value(x), kernel, _pair(stride, kernel), _pair(padding, 0), _pair(dilation, 1), bool(ceil_mode),
        t.dtype(x),
    )  # fmt: skip
    return (out, None)


@rule(aten.avg_pool2d.default)
def avg_pool(t, node):
    args = list(node.args) + [None] * (7 - len(node.args))
    x, kernel, stride, padding, ceil_mode, count_include_pad, divisor = args[:7]
    padding = _pair(padding, 0)
    if ceil_mode or divisor is not None:
        raise t.fail("average pooling with ceil_mode or divisor_override is not supported")
    if padding != [0, 0] and count_include_pad is not False:
        raise t.fail("average pooling that counts padding (count_include_pad=True) is not supported")
    kernel = _pair(kernel, None)
    return t.e.mir.pool(t.value(x), kind="mean", kernel_size=kernel, stride=_pair(stride, kernel), padding=padding)


@rule(aten._adaptive_avg_pool2d.default)
def adaptive_avg_pool(t, node):
    """Mean pooling with window = stride = input / output, where the output divides the input."""
    x, output_size = node.args[:2]
    height, width = t.shape(x)[2:]
    out = _pair(output_size, None)
    if DYNAMIC in (height, width) or height % out[0] or width % out[1]:
        raise t.fail(f"adaptive pooling to {out} of an input not divisible into it is not supported")
    window = [height // out[0], width // out[1]]
    return t.e.mir.pool(t.value(x), kind="mean", kernel_size=window, stride=window, padding=[0, 0])


@rule(aten.constant_pad_nd.default)
def constant_pad(t, node):
    """`pad` lists `(before, after)` pairs from the last dim backwards."""
    x, pads = node.args[:2]
    fill = node.args[2] if len(node.args) > 2 else 0
    rank = t.rank(x)
    per_axis = {rank - 1 - i // 2: (pads[i], pads[i + 1]) for i in range(0, len(pads), 2)}
    dtype = t.dtype(node)
    return common.pad_constant(t.e, t.value(x, dtype), per_axis, t.value(fill, dtype))
