"""numpy semantics of MIR quantisation.

quantize / dequantize (ONNX QuantizeLinear / DequantizeLinear): f32 arithmetic, rounding
half to even, saturation to the integer type (NaN, which ONNX leaves undefined, quantises
to the zero point). The fake quantisations compute in x's accumulation dtype (f32 for
f16/bf16) and round the result once to x's dtype; steps multiply by `1 / s` as PyTorch's
fake-quantize kernels do.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import quant
from rlx_xdsl.formats import quantformats
from rlx_xdsl.interpreters.common import result_dtype
from rlx_xdsl.interpreters.mir.conv import pad_hw, windows
from rlx_xdsl.numerics import convert, widened


def per_element(op: quant.AffineQuantOperation, values, rank: int, dtype) -> np.ndarray:
    """`values` (one per scale) shaped to broadcast against the operand: a scalar per
    tensor, a vector along `axis` per channel."""
    array = np.asarray(values, dtype)
    axis = op.channel_axis(quant.tensor_type(op.x))
    if axis is None:
        return array.reshape(())
    shape = [1] * rank
    shape[axis] = array.size
    return array.reshape(shape)


def run_quantize(op: quant.QuantizeOp, x) -> tuple[np.ndarray]:
    scale = per_element(op, op.scale_list(), x.ndim, np.float32)
    zero = per_element(op, op.zero_point_list(), x.ndim, np.float32)
    lo, hi = quant.INT_RANGES[op.storage_name()]
    x = x.astype(np.float32)
    q = np.where(np.isnan(x), zero, np.rint(x / scale) + zero)  # NaN: the zero point
    return (np.clip(q, lo, hi).astype(result_dtype(op)),)


def run_dequantize(op: quant.DequantizeOp, x) -> tuple[np.ndarray]:
    scale = per_element(op, op.scale_list(), x.ndim, np.float32)
    zero = per_element(op, op.zero_point_list(), x.ndim, np.float32)
    return ((x.astype(np.float32) - zero) * scale,)


# Fake quantisation ---------------------------------------------------------------------


def per_channel(op: quant.RangeQuantOperation, values: np.ndarray, rank: int) -> np.ndarray:
    """A `[C]` (or `[]`/`[1]`) operand shaped to broadcast against x."""
    axis = op.channel_axis()
    if axis is None:
        return values.reshape(())
    shape = [1] * rank
    shape[axis] = -1
    return values.reshape(shape)


def reduced_axes(op: quant.RangeQuantOperation, rank: int) -> tuple[int, ...]:
    """The axes a per-channel statistic runs over: all but `axis` (all per tensor)."""
    axis = op.channel_axis()
    return tuple(a for a in range(rank) if a != axis)


def clipping_range(op: quant.SteOperation, x: np.ndarray, state) -> np.ndarray:
    """The range `r` of `fake_quantize` (broadcastable against x), as `scale_mode` says."""
    if op.mode() is quant.ScaleMode.FIXED:
        return per_channel(op, widened(state), x.ndim)
    amax = np.max(np.abs(x), axis=reduced_axes(op, x.ndim), keepdims=True) if x.size else np.zeros(())
    if op.mode() is quant.ScaleMode.PER_BATCH:
        return amax
    decay = x.dtype.type(op.decay.value.data)
    return decay * per_channel(op, widened(state), x.ndim) + (1 - decay) * amax


def step(op: quant.SteOperation, x: np.ndarray, state) -> tuple[np.ndarray, np.ndarray]:
    """`(r, s)`: the range (a zero range taken as qmax, so that `s = 1`) and the step `r / qmax`."""
    _, qmax = op.grid()
    r = clipping_range(op, x, state)
    r = np.where(r > 0, r, x.dtype.type(qmax))
    return r, r / x.dtype.type(qmax)


def grid_values(op: quant.RangeQuantOperation, x: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`(v, q)`: `v = x * (1 / s)` and its rounded value (not yet clamped)."""
    v = x * (x.dtype.type(1) / s)
    return v, np.rint(v)


def fake_quantized(op: quant.RangeQuantOperation, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    qmin, qmax = op.grid()
    _, q = grid_values(op, x, s)
    return np.clip(q, qmin, qmax) * s


def in_grid(op: quant.RangeQuantOperation, x: np.ndarray, s: np.ndarray) -> np.ndarray:
    qmin, qmax = op.grid()
    _, q = grid_values(op, x, s)
    return (q >= qmin) & (q <= qmax)


def run_fake_quantize(op: quant.FakeQuantizeOp, x, state=None) -> tuple[np.ndarray]:
    xw = widened(x)
    _, s = step(op, xw, state)
    return (convert(fake_quantized(op, xw, s), x.dtype),)


def ste_derivative(op: quant.FakeQuantizeBackwardOp, x: np.ndarray, state) -> np.ndarray:
    """The surrogate `d(x)` of the op's `ste` kind."""
    r, s = step(op, x, state)
    ste = op.ste.data
    if ste is quant.SteKind.IDENTITY:
        return np.ones_like(x)
    if ste is quant.SteKind.CLIPPED_IDENTITY:
        return in_grid(op, x, s).astype(x.dtype)
    if ste is quant.SteKind.HARD_TANH:
        return (np.abs(x) <= r).astype(x.dtype)
    t = np.tanh(x / r)
    return 1 - t * t


def run_fake_quantize_backward(op: quant.FakeQuantizeBackwardOp, x, dy, state=None) -> tuple[np.ndarray]:
    xw = widened(x)
    return (convert(widened(dy) * ste_derivative(op, xw, state), x.dtype),)


# LSQ ---------------------------------------------------------------------------------


def run_fake_quantize_lsq(op: quant.FakeQuantizeLsqOp, x, scale) -> tuple[np.ndarray]:
    xw = widened(x)
    s = per_channel(op, widened(scale), x.ndim)
    return (convert(fake_quantized(op, xw, s), x.dtype),)


def run_lsq_backward_x(op: quant.FakeQuantizeLsqBackwardXOp, x, scale, dy) -> tuple[np.ndarray]:
    xw = widened(x)
    s = per_channel(op, widened(scale), x.ndim)
    return (convert(widened(dy) * in_grid(op, xw, s), x.dtype),)


def lsq_gradient_scale(op: quant.RangeQuantOperation, x: np.ndarray) -> np.floating:
    """LSQ's `g = 1 / sqrt(N * qmax)` in x's dtype, N the number of elements sharing one step."""
    _, qmax = op.grid()
    axis = op.channel_axis()
    n = x.size if axis is None else int(np.prod([d for a, d in enumerate(x.shape) if a != axis]))
    one = x.dtype.type(1)
    return one / np.sqrt(x.dtype.type(n) * x.dtype.type(qmax))


def run_lsq_backward_scale(op: quant.FakeQuantizeLsqBackwardScaleOp, x, scale, dy) -> tuple[np.ndarray]:
    qmin, qmax = op.grid()
    xw = widened(x)
    s = per_channel(op, widened(scale), x.ndim)
    v, q = grid_values(op, xw, s)
    e = np.where(q < qmin, xw.dtype.type(qmin), np.where(q > qmax, xw.dtype.type(qmax), q - v))
    total = np.sum(widened(dy) * e, axis=reduced_axes(op, x.ndim))
    g = lsq_gradient_scale(op, xw)
    return (convert((total * g).reshape(scale.shape), scale.dtype),)


# Integer matmul and convolution -----------------------------------------------------------


def centred(values: np.ndarray, zero_point: int) -> np.ndarray:
    return values.astype(np.int64) - np.int64(zero_point)


def requantised(op: quant.IntegerContractionOperation, accumulated: np.ndarray) -> np.ndarray:
    """`saturate(round_half_even(acc * mult) + out_zp)`, the product in f64 (as ONNX's reference)."""
    lo, hi = quant.INT_RANGES[op.out_storage()]
    scaled = accumulated.astype(np.float64) * np.float64(np.float32(op.mult.value.data))
    q = np.rint(scaled + np.float64(op.out_zp.value.data))
    return np.clip(q, lo, hi).astype(result_dtype(op))


def run_qmatmul(op: quant.QMatmulOp, x, w, bias) -> tuple[np.ndarray]:
    acc = centred(x, op.x_zp.value.data) @ centred(w, op.w_zp.value.data) + bias.astype(np.int64)
    return (requantised(op, acc),)


def run_qconv2d(op: quant.QConv2dOp, x, w, bias) -> tuple[np.ndarray]:
    """The integer convolution on the centred operands (padding reads 0 = the zero point)."""
    groups = op.groups.value.data
    win = windows(op, pad_hw(centred(x, op.x_zp.value.data), op.pair("padding"), 0))
    n, cin, ho, wo, kh, kw = win.shape
    cout = w.shape[0]
    cols = win.reshape(n, groups, cin // groups, ho, wo, kh, kw)
    weights = centred(w, op.w_zp.value.data).reshape(groups, cout // groups, cin // groups, kh, kw)
    acc = np.einsum("ngchwij,gfcij->ngfhw", cols, weights).reshape(n, cout, ho, wo)
    return (requantised(op, acc + bias.astype(np.int64).reshape(1, cout, 1, 1)),)


# Weight-only quantised matmul ----------------------------------------------------------------


def per_block(values: np.ndarray, block: int) -> np.ndarray:
    """`[K/B, N]` block values repeated to `[K, N]`."""
    return np.repeat(values, block, axis=0)


def dequantized_weights(op: quant.BlockQuantOperation, w_q, scale, zp, dtype) -> np.ndarray:
    """`W [K, N]` in `dtype` (x's accumulation dtype), as the op's scheme decodes it."""
    scheme, block = op.quant_scheme(), op.block()
    Scheme = quant.QuantScheme

    def decoded(fmt: str, codes: np.ndarray) -> np.ndarray:
        return quantformats.table(fmt)[codes].astype(dtype)

    if scheme is Scheme.NVFP4_BLOCK:
        block_scale = decoded("e4m3fn", scale)
        return decoded("e2m1", quantformats.nibbles(w_q)) * per_block(block_scale, block) * zp.astype(dtype).reshape(())
    scale = scale.astype(dtype)
    if scheme is Scheme.INT4_BLOCK:
        return decoded("int4", quantformats.nibbles(w_q)) * per_block(scale, block)
    if scheme in (Scheme.FP8_E4M3, Scheme.FP8_E5M2):
        fmt = "e4m3fn" if scheme is Scheme.FP8_E4M3 else "e5m2"
        return decoded(fmt, w_q.astype(np.uint8)) * scale.reshape(1, -1)
    values = w_q.astype(dtype)
    if scheme is Scheme.INT8_BLOCK_ASYM:
        values = values - per_block(zp.astype(dtype), block)
    return values * per_block(scale, block)


def gguf_weights(op: quant.DequantMatmulOp, packed: np.ndarray, k: int, dtype) -> np.ndarray:
    """`W [N, K]` from GGUF bytes: rows of GGML blocks, each an f16 scale `d` and its codes."""
    scheme = op.quant_scheme()
    values, size = quant.GGUF_BLOCKS[scheme]
    blocks = packed.astype(np.uint8).reshape(-1, k // values, size)
    d = np.ascontiguousarray(blocks[..., :2]).view(np.float16).astype(dtype)
    codes = np.ascontiguousarray(blocks[..., 2:])
    if scheme is quant.QuantScheme.GGUF_Q6_K:
        return q6_k_weights(blocks, dtype).reshape(blocks.shape[0], k)
    if scheme in (quant.QuantScheme.GGUF_Q4_K, quant.QuantScheme.GGUF_Q5_K):
        return q4_k_weights(blocks, dtype).reshape(blocks.shape[0], k)
    if scheme is quant.QuantScheme.GGUF_Q2_K:
        return q2_k_weights(blocks, dtype).reshape(blocks.shape[0], k)
    if scheme is quant.QuantScheme.GGUF_Q3_K:
        return q3_k_weights(blocks, dtype).reshape(blocks.shape[0], k)
    if scheme is quant.QuantScheme.GGUF_Q8_K:  # an f32 d, 256 i8, 16 i16 sums
        d = np.ascontiguousarray(blocks[..., 0:4]).view(np.float32).astype(dtype)
        q = np.ascontiguousarray(blocks[..., 4:260]).view(np.int8).astype(dtype)
        return (d * q).reshape(blocks.shape[0], k)
    if scheme is quant.QuantScheme.GGUF_Q8_0:
        q = codes.view(np.int8)
    else:  # Q4_0: byte i holds value i (low nibble) and value i + 16 (high nibble)
        q = np.concatenate([codes & 0x0F, codes >> 4], axis=-1).astype(np.int8) - np.int8(8)
    return (d * q.astype(dtype)).reshape(blocks.shape[0], k)


def q6_k_weights(blocks: np.ndarray, dtype) -> np.ndarray:
    """Q6_K blocks `[..., 210]`: value `e = 128 h + 64 s + 32 u + t` of each block."""
    ql = blocks[..., :128].reshape(*blocks.shape[:-1], 2, 1, 2, 32)  # [h, s, u, t]
    qh = blocks[..., 128:192].reshape(*blocks.shape[:-1], 2, 1, 1, 32)  # [h, ., ., t]
    s = np.arange(2, dtype=np.uint8).reshape(2, 1, 1)
    u = np.arange(2, dtype=np.uint8).reshape(1, 2, 1)
    low = (ql >> (4 * s)) & 0x0F
    high = (qh >> (4 * s + 2 * u)) & 0x03
    q = (low | (high << 4)).astype(np.int8) - np.int8(32)
    scales = np.ascontiguousarray(blocks[..., 192:208]).view(np.int8).astype(dtype)
    d = np.ascontiguousarray(blocks[..., 208:210]).view(np.float16).astype(dtype)
    q = q.reshape(*blocks.shape[:-1], 16, 16).astype(dtype)
    return d[..., None] * scales[..., None] * q


def q4_k_scales(packed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The 8 six-bit scales and mins of Q4_K's 12 bytes `S` (`[..., 12]` -> `[..., 8]` each)."""
    low, high = packed[..., 0:4], packed[..., 4:8]
    tail = packed[..., 8:12]
    sc = np.concatenate([low & 63, (tail & 15) | ((low >> 6) << 4)], axis=-1)
    m = np.concatenate([high & 63, (tail >> 4) | ((high >> 6) << 4)], axis=-1)
    return sc, m


def q4_k_weights(blocks: np.ndarray, dtype) -> np.ndarray:
    """Q4_K blocks `[..., 144]`: sub-block `j = 2 i + p` is nibble p of `qs[32 i + t]`;
    Q5_K blocks `[..., 176]` add bit j of `qh[t]` as bit 4."""
    d = np.ascontiguousarray(blocks[..., 0:2]).view(np.float16).astype(dtype)
    dmin = np.ascontiguousarray(blocks[..., 2:4]).view(np.float16).astype(dtype)
    sc, m = q4_k_scales(blocks[..., 4:16])
    five = blocks.shape[-1] == 176
    qs = blocks[..., 48 if five else 16 :].reshape(*blocks.shape[:-1], 4, 1, 32)
    q = ((qs >> (4 * np.arange(2, dtype=np.uint8).reshape(2, 1))) & 15).reshape(*blocks.shape[:-1], 8, 32)
    if five:
        qh = blocks[..., None, 16:48]
        q = q | (((qh >> np.arange(8, dtype=np.uint8).reshape(8, 1)) & 1) << 4)
    return (d * sc.astype(dtype))[..., None] * q.astype(dtype) - (dmin * m.astype(dtype))[..., None]


def two_bit_codes(qs: np.ndarray) -> np.ndarray:
    """`qs[..., 64]` -> `[..., 16, 16]`: value `128 h + 32 s + t` is `(qs[32 h + t] >> 2 s) & 3`."""
    shifts = (2 * np.arange(4, dtype=np.uint8)).reshape(4, 1)
    return ((qs.reshape(*qs.shape[:-1], 2, 1, 32) >> shifts) & 3).reshape(*qs.shape[:-1], 16, 16)


def f16_at(blocks: np.ndarray, at: int, dtype) -> np.ndarray:
    return np.ascontiguousarray(blocks[..., at : at + 2]).view(np.float16).astype(dtype)


def q2_k_weights(blocks: np.ndarray, dtype) -> np.ndarray:
    """Q2_K blocks `[..., 84]`: scale and min nibbles per 16 values, 2-bit codes."""
    scales = blocks[..., :16]
    step = (f16_at(blocks, 80, dtype) * (scales & 15).astype(dtype))[..., None]
    low = (f16_at(blocks, 82, dtype) * (scales >> 4).astype(dtype))[..., None]
    return step * two_bit_codes(blocks[..., 16:80]).astype(dtype) - low


def q3_k_weights(blocks: np.ndarray, dtype) -> np.ndarray:
    """Q3_K blocks `[..., 110]`: 2-bit codes, a high bit (set: +0, clear: -4), 6-bit scales."""
    packed = blocks[..., 96:108]
    k = np.arange(16)
    low = (packed[..., k % 8] >> (4 * (k // 8)).astype(np.uint8)) & 15
    high = (packed[..., 8 + k % 4] >> (2 * (k // 4)).astype(np.uint8)) & 3
    scale = ((low | (high << 4)).astype(np.int8) - np.int8(32)).astype(dtype)
    bits = (blocks[..., None, :32] >> np.arange(8, dtype=np.uint8).reshape(8, 1)) & 1
    q = two_bit_codes(blocks[..., 32:96]).astype(np.int8) - 4 * (1 - bits.reshape(*blocks.shape[:-1], 16, 16)).astype(np.int8)
    return (f16_at(blocks, 108, dtype) * scale)[..., None] * q.astype(dtype)


def run_dequant_matmul(op: quant.DequantMatmulOp, x, w_q, *params) -> tuple[np.ndarray]:
    xw = widened(x)
    if op.quant_scheme().is_gguf:
        return (convert(xw @ gguf_weights(op, w_q, x.shape[1], xw.dtype).T, x.dtype),)
    weights = dequantized_weights(op, w_q, *params, xw.dtype)
    return (convert(xw @ weights, x.dtype),)


KERNELS = {
    quant.QuantizeOp: run_quantize,
    quant.DequantizeOp: run_dequantize,
    quant.FakeQuantizeOp: run_fake_quantize,
    quant.FakeQuantizeBackwardOp: run_fake_quantize_backward,
    quant.FakeQuantizeLsqOp: run_fake_quantize_lsq,
    quant.FakeQuantizeLsqBackwardXOp: run_lsq_backward_x,
    quant.FakeQuantizeLsqBackwardScaleOp: run_lsq_backward_scale,
    quant.QMatmulOp: run_qmatmul,
    quant.QConv2dOp: run_qconv2d,
    quant.DequantMatmulOp: run_dequant_matmul,
}
