"""numpy semantics of the MIR backward kernels.

Each kernel recomputes the forward statistics it needs from `x` (nothing is
saved from the forward), reusing the forward kernels' helpers so that both sides
agree on masks, windows and padding. Sums run in the accumulation dtype
(`common.widened`: f32 for f16/bf16) and the result is rounded to the op's dtype.
Loops, where there are any, run over the few positions of a kernel window, never
over elements.
"""

from __future__ import annotations

import math

import numpy as np

from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.attention import MaskKind
from rlx_xdsl.dialects.mir.attrs import Activation, ReduceKind
from rlx_xdsl.interpreters.common import as_result, widened
from rlx_xdsl.interpreters.mir.attention import (
    position_keep,
    repeat_kv_heads,
    softmax_or_zero,
)
from rlx_xdsl.interpreters.mir.conv import pad_hw, windows
from rlx_xdsl.interpreters.mir.elementwise import gelu_cdf, sigmoid
from rlx_xdsl.interpreters.mir.indexing import checked_indices
from rlx_xdsl.interpreters.mir.reduction import cumsum

# Activations ------------------------------------------------------------------------

_GELU_C = math.sqrt(2.0 / math.pi)
_GELU_K = 0.044715


def _gelu_approx_derivative(x: np.ndarray) -> np.ndarray:
    """The derivative of tanh-GELU `x σ(2u)`, `u = c (x + k x³)`: `s + 2x s (1 - s) u'` with
    `s = σ(2u)`, `1 - s = σ(-2u)` and `u' = c (1 + 3k x²)`, in f64 (`1 + tanh(u)` cancelled
    below x = -5); `s` itself where `s (1 - s)` is 0 (x³ may overflow there)."""
    w = x.astype(np.float64)
    u = _GELU_C * (w + _GELU_K * (w * w * w))
    with np.errstate(over="ignore", invalid="ignore"):
        s, rest = 1.0 / (1.0 + np.exp(-2.0 * u)), 1.0 / (1.0 + np.exp(2.0 * u))
        slope = s * rest
        full = s + 2.0 * w * slope * (_GELU_C * (1.0 + 3.0 * _GELU_K * (w * w)))
    return np.where(slope == 0, s, full)


def _silu_derivative(x: np.ndarray) -> np.ndarray:
    s = sigmoid(x)
    return s * (1.0 + x * (1.0 - s))


def _masked_positive(x: np.ndarray, value) -> np.ndarray:
    """`value` where `x > 0`, else 0 (RLX's convention for sqrt and rsqrt)."""
    return np.where(x > 0, value, np.zeros((), x.dtype))


DERIVATIVES = {
    Activation.GELU: lambda x: gelu_cdf(x) + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi),
    Activation.GELU_APPROX: _gelu_approx_derivative,
    Activation.SILU: _silu_derivative,
    Activation.RELU: lambda x: (x > 0).astype(x.dtype),
    Activation.SIGMOID: lambda x: sigmoid(x) * (1.0 - sigmoid(x)),
    Activation.TANH: lambda x: 1.0 - np.tanh(x) ** 2,
    Activation.EXP: np.exp,
    Activation.LOG: lambda x: 1.0 / x,
    Activation.SQRT: lambda x: _masked_positive(x, 0.5 / np.sqrt(x)),
    Activation.RSQRT: lambda x: _masked_positive(x, -0.5 / (x * np.sqrt(x))),
    Activation.NEG: lambda x: -np.ones_like(x),
    Activation.ABS: np.sign,
    Activation.SIN: np.cos,
    Activation.COS: lambda x: -np.sin(x),
    Activation.TAN: lambda x: 1.0 + np.tan(x) ** 2,
    Activation.ATAN: lambda x: 1.0 / (1.0 + x * x),
    Activation.ROUND: np.ones_like,  # straight-through, as RLX
    Activation.LOG1P: lambda x: 1.0 / (1.0 + x),
    Activation.EXPM1: np.exp,
    Activation.ERF: lambda x: (2.0 / np.sqrt(np.pi)) * np.exp(-x * x),
}
"""`f'(x)` of each activation (the exact derivative; see `ActivationBackwardOp` for conventions)."""


def run_relu_backward(op: bw.ReluBackwardOp, x, dy) -> tuple[np.ndarray]:
    return (as_result(op, np.where(x > 0, dy, np.zeros((), dy.dtype))),)


def run_activation_backward(op: bw.ActivationBackwardOp, x, dy) -> tuple[np.ndarray]:
    x, dy = widened(x), widened(dy)  # halves: one rounding at the end, as the forward activations
    with np.errstate(all="ignore"):
        return (as_result(op, dy * DERIVATIVES[op.activation](x)),)


# Normalisations -----------------------------------------------------------------------


def _axis_stats(op: bw.AxisNormGradientOperation, x: np.ndarray) -> tuple[tuple[int, ...], np.ndarray]:
    """The normalised axes and `x_hat` (standardised for layer_norm, RMS-scaled for rms_norm)."""
    axes = tuple(range(op.normalized_axis(x.ndim), x.ndim))
    eps = x.dtype.type(op.eps.value.data)
    if isinstance(op, (bw.LayerNormBackwardInputOp, bw.LayerNormBackwardGammaOp)):
        centred = x - x.mean(axis=axes, keepdims=True)
        rstd = 1 / np.sqrt((centred * centred).mean(axis=axes, keepdims=True) + eps)
        return axes, centred * rstd
    return axes, x / np.sqrt((x * x).mean(axis=axes, keepdims=True) + eps)


def _input_gradient(x_hat: np.ndarray, rstd: np.ndarray, g: np.ndarray, axes, centred: bool) -> np.ndarray:
    """`rstd (g - [mean g] - x_hat mean(g x_hat))`; layer_norm subtracts mean(g) (`centred`)."""
    projected = g - x_hat * (g * x_hat).mean(axis=axes, keepdims=True)
    if centred:
        projected = projected - g.mean(axis=axes, keepdims=True)
    return rstd * projected


def run_axis_norm_input(op, x, gamma, dy) -> tuple[np.ndarray]:
    x, gamma, dy = widened(x), widened(gamma), widened(dy)
    axes = tuple(range(op.normalized_axis(x.ndim), x.ndim))
    eps = x.dtype.type(op.eps.value.data)
    layer = isinstance(op, bw.LayerNormBackwardInputOp)
    shifted = x - x.mean(axis=axes, keepdims=True) if layer else x
    rstd = 1 / np.sqrt((shifted * shifted).mean(axis=axes, keepdims=True) + eps)
    dx = _input_gradient(shifted * rstd, rstd, dy * gamma, axes, centred=layer)
    return (as_result(op, dx),)


def run_axis_norm_gamma(op, x, dy) -> tuple[np.ndarray]:
    x, dy = widened(x), widened(dy)
    axes, x_hat = _axis_stats(op, x)
    return (as_result(op, (dy * x_hat).sum(axis=tuple(range(axes[0])))),)


def run_rms_norm_beta(op: bw.RmsNormBackwardBetaOp, dy) -> tuple[np.ndarray]:
    return (as_result(op, widened(dy).sum(axis=tuple(range(op.normalized_axis(dy.ndim))))),)


def _group_blocks(op, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`(x_hat, rstd)` per (sample, group) block of `x[N, C, ...]`, in x's layout."""
    blocks = x.reshape(x.shape[0], op.num_groups.value.data, -1)
    centred = blocks - blocks.mean(axis=2, keepdims=True)
    rstd = 1 / np.sqrt((centred * centred).mean(axis=2, keepdims=True) + x.dtype.type(op.eps.value.data))
    return (centred * rstd).reshape(x.shape), rstd


def _all_but_channels(x: np.ndarray) -> tuple[int, ...]:
    return (0, *range(2, x.ndim))


def run_group_norm_input(op: bw.GroupNormBackwardInputOp, x, gamma, dy) -> tuple[np.ndarray]:
    x, gamma, dy = widened(x), widened(gamma), widened(dy)
    x_hat, rstd = _group_blocks(op, x)
    g = dy * gamma.reshape((-1,) + (1,) * (x.ndim - 2))
    blocks = (x.shape[0], op.num_groups.value.data, -1)
    dx = _input_gradient(x_hat.reshape(blocks), rstd, g.reshape(blocks), (2,), centred=True)
    return (as_result(op, dx.reshape(x.shape)),)


def run_group_norm_gamma(op: bw.GroupNormBackwardGammaOp, x, dy) -> tuple[np.ndarray]:
    x, dy = widened(x), widened(dy)
    x_hat, _ = _group_blocks(op, x)
    return (as_result(op, (dy * x_hat).sum(axis=_all_but_channels(x))),)


def run_group_norm_beta(op: bw.GroupNormBackwardBetaOp, dy) -> tuple[np.ndarray]:
    return (as_result(op, widened(dy).sum(axis=_all_but_channels(dy))),)


# Rope and attention -----------------------------------------------------------------------


def run_rope_backward(op: bw.RopeBackwardOp, dy, cos, sin) -> tuple[np.ndarray]:
    dy, cos, sin = (widened(a) for a in (dy, cos, sin))  # as the forward rope
    half = op.n_rot.value.data // 2
    d1, d2, rest = dy[..., :half], dy[..., half : 2 * half], dy[..., 2 * half :]
    out = (d1 * cos + d2 * sin, d2 * cos - d1 * sin, rest)
    return (as_result(op, np.concatenate(out, axis=-1)),)


def _sum_kv_groups(grad: np.ndarray, kv_heads: int) -> np.ndarray:
    """Sum `[B, H, S, D]` over the query heads that share each of the `kv_heads` KV heads."""
    batch, heads, seq, dim = grad.shape
    return grad.reshape(batch, kv_heads, heads // kv_heads, seq, dim).sum(axis=2)


def run_attention_backward(op: bw.AttentionBackwardOp, q, k, v, dy, mask=None) -> tuple[np.ndarray]:
    q, k, v, dy = (widened(a) for a in (q, k, v, dy))
    num_heads, kv_heads = op.num_heads.value.data, k.shape[1]
    scale = q.dtype.type(op.scale())
    kr, vr = repeat_kv_heads(k, num_heads), repeat_kv_heads(v, num_heads)
    scores = (q @ np.swapaxes(kr, -1, -2)) * scale
    logits = scores
    if op.attn_logit_softcap is not None:
        cap = q.dtype.type(op.attn_logit_softcap.value.data)
        logits = cap * np.tanh(scores / cap)
    window = op.window.value.data if op.window is not None else None
    keep = position_keep(op.kind, window, q.shape[2], k.shape[2])
    if op.kind == MaskKind.CUSTOM:
        keep = (mask >= 0.5)[:, None, None, :]
    if op.kind == MaskKind.BIAS:
        logits = logits + widened(mask)
    if keep is not None:
        logits = np.where(keep, logits, q.dtype.type(-np.inf))
    probs = softmax_or_zero(logits)
    if op.with_respect_to == bw.AttentionWrt.VALUE:
        return (as_result(op, _sum_kv_groups(np.swapaxes(probs, -1, -2) @ dy, kv_heads)),)
    d_probs = dy @ np.swapaxes(vr, -1, -2)
    d_logits = probs * (d_probs - (d_probs * probs).sum(axis=-1, keepdims=True))
    if op.attn_logit_softcap is not None:
        d_logits = d_logits * (1 - np.tanh(scores / cap) ** 2)
    d_scores = d_logits * scale
    if op.with_respect_to == bw.AttentionWrt.QUERY:
        return (as_result(op, d_scores @ kr),)
    return (as_result(op, _sum_kv_groups(np.swapaxes(d_scores, -1, -2) @ q, kv_heads)),)


# Convolution and pooling -------------------------------------------------------------------


def _scatter_windows(op, padded_shape, cells: np.ndarray) -> np.ndarray:
    """Add `cells[N, C, Ho, Wo, kh, kw]` back onto the padded input grid, cell by window cell.

    The adjoint of `conv.windows`: one strided slice per kernel position (within
    one position the windows' cells are distinct, so `+=` is exact).
    """
    (kh, kw), (sh, sw) = op.pair("kernel_size"), op.pair("stride")
    dh, dw = op.dilation_pair()
    ho, wo = cells.shape[2:4]
    out = np.zeros(padded_shape, cells.dtype)
    for a in range(kh):
        for b in range(kw):
            rows = slice(a * dh, a * dh + sh * (ho - 1) + 1, sh)
            cols = slice(b * dw, b * dw + sw * (wo - 1) + 1, sw)
            out[:, :, rows, cols] += cells[..., a, b]
    return out


def _unpad(op, padded: np.ndarray) -> np.ndarray:
    ph, pw = op.pair("padding")
    return padded[:, :, ph : padded.shape[2] - ph, pw : padded.shape[3] - pw]


def run_conv_backward_input(op: bw.ConvBackwardInputOp, dy, w) -> tuple[np.ndarray]:
    return (as_result(op, transposed_conv(op, dy, w, op.pair("input_size"))),)


def transposed_conv(op, dy, w, size: tuple[int, int]) -> np.ndarray:
    """The transposed convolution of `dy` with `w` (`[Cout, Cin / groups, kh, kw]` of the
    forward conv) into `size` (H, W), in the accumulation dtype: `conv_backward_input`
    and `conv_transpose_2d` (`op` gives the window properties)."""
    dy, w = widened(dy), widened(w)
    groups = op.groups.value.data
    n, cout, ho, wo = dy.shape
    _, per_group, kh, kw = w.shape
    # [N, G, Ho*Wo, Cout/G] x [G, Cout/G, Cin/G*kh*kw] -> the gradient of each window cell
    dy_g = dy.reshape(n, groups, cout // groups, ho * wo).transpose(0, 1, 3, 2)
    cells = dy_g @ w.reshape(groups, cout // groups, -1)
    cells = cells.reshape(n, groups, ho, wo, per_group, kh, kw).transpose(0, 1, 4, 2, 3, 5, 6)
    cells = cells.reshape(n, groups * per_group, ho, wo, kh, kw)
    (h, width), (ph, pw) = size, op.pair("padding")
    padded = _scatter_windows(op, (n, groups * per_group, h + 2 * ph, width + 2 * pw), cells)
    return _unpad(op, padded)


def run_conv_backward_weight(op: bw.ConvBackwardWeightOp, x, dy) -> tuple[np.ndarray]:
    x, dy = widened(x), widened(dy)
    groups = op.groups.value.data
    win = windows(op, pad_hw(x, op.pair("padding"), 0))
    n, cin, ho, wo, kh, kw = win.shape
    cout = dy.shape[1]
    cols = win.reshape(n, groups, cin // groups, ho, wo, kh, kw)
    dy_g = dy.reshape(n, groups, cout // groups, ho, wo)
    dw = np.einsum("ngohw,ngchwab->gocab", dy_g, cols, optimize=True)
    return (as_result(op, dw.reshape(cout, cin // groups, kh, kw)),)


def run_pool_backward(op: bw.PoolBackwardOp, x, dy) -> tuple[np.ndarray]:
    x, dy = widened(x), widened(dy)
    padding = op.pair("padding")
    (kh, kw) = op.pair("kernel_size")
    ones = np.ones((1, 1, *x.shape[2:]), x.dtype)
    real = windows(op, pad_hw(ones, padding, 0)) > 0  # the window cells that are not padding
    padded = pad_hw(x, padding, 0)
    if op.kind.data == ReduceKind.MAX:
        win = windows(op, padded)
        window_max = np.where(real, win, -np.inf).max(axis=(-2, -1), keepdims=True)
        is_max = (real & (win == window_max)).reshape(*win.shape[:4], kh * kw)
        first = is_max.argmax(axis=-1)[..., None]  # the first real maximum; none when it is NaN
        chosen = (np.arange(kh * kw) == first) & is_max
        cells = np.where(chosen, dy[..., None], 0).reshape(win.shape)
    else:
        count = real.sum(axis=(-2, -1))
        cells = np.broadcast_to((dy / count)[..., None, None], (*dy.shape, kh, kw)) * real
    return (as_result(op, _unpad(op, _scatter_windows(op, padded.shape, cells))),)


# Scans, indexing, stop_gradient -------------------------------------------------------------


def run_cumsum_backward(op: bw.CumsumBackwardOp, dy) -> tuple[np.ndarray]:
    axis = op.normalized_axis()
    reversed_dy = np.flip(widened(dy), axis=axis)
    total = cumsum(reversed_dy, axis, op.exclusive is not None)
    return (as_result(op, np.flip(total, axis=axis)),)


def run_gather_backward(op: bw.GatherBackwardOp, dy, indices) -> tuple[np.ndarray]:
    axis, size = op.table_axis(), op.dim_size.value.data
    ids = checked_indices(indices, size).reshape(-1)
    index_dims = range(axis, axis + indices.ndim)
    # [M, T[:axis]..., T[axis+1:]...]: one row of dy per index
    rows = np.moveaxis(widened(dy), list(index_dims), list(range(indices.ndim)))
    rows = rows.reshape(ids.size, *rows.shape[indices.ndim :])
    out = np.zeros((size, *rows.shape[1:]), rows.dtype)
    np.add.at(out, ids, rows)
    return (as_result(op, np.moveaxis(out, 0, axis)),)


def run_stop_gradient(op: bw.StopGradientOp, x) -> tuple[np.ndarray]:
    return (x,)


KERNELS = {
    bw.ReluBackwardOp: run_relu_backward,
    bw.ActivationBackwardOp: run_activation_backward,
    bw.LayerNormBackwardInputOp: run_axis_norm_input,
    bw.LayerNormBackwardGammaOp: run_axis_norm_gamma,
    bw.RmsNormBackwardInputOp: run_axis_norm_input,
    bw.RmsNormBackwardGammaOp: run_axis_norm_gamma,
    bw.RmsNormBackwardBetaOp: run_rms_norm_beta,
    bw.GroupNormBackwardInputOp: run_group_norm_input,
    bw.GroupNormBackwardGammaOp: run_group_norm_gamma,
    bw.GroupNormBackwardBetaOp: run_group_norm_beta,
    bw.RopeBackwardOp: run_rope_backward,
    bw.AttentionBackwardOp: run_attention_backward,
    bw.ConvBackwardInputOp: run_conv_backward_input,
    bw.ConvBackwardWeightOp: run_conv_backward_weight,
    bw.PoolBackwardOp: run_pool_backward,
    bw.CumsumBackwardOp: run_cumsum_backward,
    bw.GatherBackwardOp: run_gather_backward,
    bw.StopGradientOp: run_stop_gradient,
}
