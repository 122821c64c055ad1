"""Conv, MaxPool (with dilations and ceil_mode), AveragePool, GlobalAveragePool/GlobalMaxPool on 2-D NCHW tensors."""

from __future__ import annotations

from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.table import rule


def _window(t, kernel_rank: int = 2):
    if t.attr("auto_pad", b"NOTSET") not in (b"NOTSET", "NOTSET", b"VALID", "VALID"):
        raise t.fail("auto_pad SAME_UPPER/SAME_LOWER is not supported")
    pads = list(t.attr("pads", [0] * 2 * kernel_rank))
    if pads[:kernel_rank] != pads[kernel_rank:]:
        raise t.fail(f"asymmetric pads {pads} are not supported")
    strides = list(t.attr("strides", [1] * kernel_rank))
    dilations = list(t.attr("dilations", [1] * kernel_rank))
    return strides, pads[:kernel_rank], dilations


@rule("Conv")
def conv(t, node):
    x, w = t.value(0), t.value(1)
    if t.rank(x) != 4:
        raise t.fail(f"only 2-D convolution is supported (input of rank {t.rank(x)})")
    strides, pads, dilations = _window(t)
    out = t.e.mir.conv(
        x, w, kernel_size=t.shape(w)[2:], stride=strides, padding=pads, dilation=dilations, groups=t.attr("group", 1)
    )
    if t.input(2) is None:
        return out
    return t.e.mir.add(out, t.e.mir.reshape(t.value(2), new_shape=[-1, 1, 1]))


@rule("MaxPool", "AveragePool")
def pool(t, node):
    x = t.value(0)
    if t.rank(x) != 4:
        raise t.fail(f"only 2-D pooling is supported (input of rank {t.rank(x)})")
    strides, pads, dilations = _window(t)
    if len(node.output) > 1 and node.output[1]:
        raise t.fail("the Indices output of MaxPool is not supported")
    kernel = list(t.attr("kernel_shape"))
    if node.op_type == "MaxPool":  # dilations and ceil_mode through common.max_pool
        return common.max_pool(t.e, x, kernel, strides, pads, dilations, bool(t.attr("ceil_mode", 0)), t.dtype(x))
    if dilations != [1, 1] or t.attr("ceil_mode", 0):
        raise t.fail("average pooling with dilations or ceil_mode is not supported")
    kind = "mean"
    if kind == "mean" and t.attr("count_include_pad", 0) and pads != [0, 0]:
        raise t.fail("average pooling that counts padding (count_include_pad=1) is not supported")
    return t.e.mir.pool(x, kind=kind, kernel_size=kernel, stride=strides, padding=pads)


@rule("GlobalAveragePool", "GlobalMaxPool")
def global_pool(t, node):
    x = t.value(0)
    kind = "mean" if node.op_type == "GlobalAveragePool" else "max"
    return t.e.mir.reduce(x, kind=kind, axes=list(range(2, t.rank(x))), keep_dim=True)
