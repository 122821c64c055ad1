"""numpy semantics of MIR convolution and pooling.

Both ops view the padded input as a grid of (strided, dilated) windows with
`sliding_window_view`; convolution then contracts windows with the weights via
`np.matmul`, and mean pooling sums windows, both accumulating f16/bf16 in f32
(`numerics.accumulate_matmul`, `accumulate_sum`) before one rounding to the op's dtype.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp, WindowOperation
from rlx_xdsl.interpreters.common import as_result
from rlx_xdsl.numerics import accumulate_matmul, accumulate_sum, reduce_max


def pad_hw(x: np.ndarray, padding, value) -> np.ndarray:
    """Pad H and W of an NCHW array symmetrically with `value`."""
    (ph, pw) = padding
    return np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)), constant_values=value)


def windows(op: WindowOperation, padded: np.ndarray) -> np.ndarray:
    """`[N, C, Ho, Wo, kh, kw]`: the op's windows over an already padded input."""
    (kh, kw), (sh, sw) = op.pair("kernel_size"), op.pair("stride")
    dh, dw = op.dilation_pair()
    view = sliding_window_view(padded, (dh * (kh - 1) + 1, dw * (kw - 1) + 1), axis=(2, 3))
    return view[:, :, ::sh, ::sw, ::dh, ::dw]


def run_conv(op: ConvOp, x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray]:
    groups = op.groups.value.data
    win = windows(op, pad_hw(x, op.pair("padding"), 0))
    n, cin, ho, wo, kh, kw = win.shape
    cout = w.shape[0]
    # [N, G, Ho*Wo, Cin/G*kh*kw] x [G, Cin/G*kh*kw, Cout/G] -> [N, G, Ho*Wo, Cout/G]
    cols = win.reshape(n, groups, cin // groups, ho, wo, kh, kw)
    cols = cols.transpose(0, 1, 3, 4, 2, 5, 6).reshape(n, groups, ho * wo, -1)
    weights = w.reshape(groups, cout // groups, -1).transpose(0, 2, 1)
    out = accumulate_matmul(cols, weights)
    return (as_result(op, out.transpose(0, 1, 3, 2).reshape(n, cout, ho, wo)),)


def lowest(dtype: np.dtype):
    """The identity of max for `dtype`: padding that never wins."""
    if dtype.kind in "iub":
        return np.iinfo(dtype).min if dtype.kind != "b" else False
    return -np.inf


def run_pool(op: PoolOp, x: np.ndarray) -> tuple[np.ndarray]:
    padding = op.pair("padding")
    if op.kind.data == ReduceKind.MAX:
        return (as_result(op, reduce_max(windows(op, pad_hw(x, padding, lowest(x.dtype))), axis=(-2, -1))),)
    total = accumulate_sum(windows(op, pad_hw(x, padding, 0)), axis=(-2, -1))
    # Count the real (unpadded) cells of each window.
    ones = np.ones((1, 1, *x.shape[2:]), total.dtype)
    count = windows(op, pad_hw(ones, padding, 0)).sum(axis=(-2, -1))
    return (as_result(op, total / count),)


KERNELS = {ConvOp: run_conv, PoolOp: run_pool}
