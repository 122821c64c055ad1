"""Quantisation: affine (de)quantisation, fake quantisation (STE and LSQ) with their
gradients, integer matmul/conv with requantisation, and weight-only quantised matmuls
whose weights are decoded from their stored bits (block int8/int4, OCP FP8, NVFP4, and
the GGUF block formats) with `jnp` integer ops, then contracted with `jnp.matmul`.

Every decoder gathers with static index tables (the byte and shift of each value in a
block), so a format is a handful of vectorised ops whatever the tensor size.
"""

import jax
import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax import conv as conv_formulas
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, operands_of, result_dtype, rounded, widen, with_op
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir import quant as q
from rlx_xdsl.dialects.mir.quant import QuantScheme, ScaleMode, SteKind

# Affine quantisation.


def _per_channel(values, x, axis):
    """`values` (one per channel along `axis`, or one) shaped to broadcast against x."""
    v = jnp.asarray(values)
    return v.reshape(()) if axis is None else v.reshape([-1 if d == axis else 1 for d in range(x.ndim)])


def saturate(v, dtype):
    info = jnp.iinfo(dtype)
    return jnp.clip(v, info.min, info.max).astype(dtype)


def _quantize(op: q.QuantizeOp, x):
    x = x.astype(jnp.float32)
    axis = op.channel_axis(tensor_type(op.x))
    scale = _per_channel(np.float32(op.scale_list()), x, axis)
    zp = _per_channel(np.float32(op.zero_point_list()), x, axis)
    v = jnp.where(jnp.isnan(x), zp, jnp.round(x / scale) + zp)  # NaN gives the zero point
    return saturate(v, result_dtype(op))


def _dequantize(op: q.DequantizeOp, x):
    axis = op.channel_axis(tensor_type(op.x))
    scale = _per_channel(np.float32(op.scale_list()), x, axis)
    zp = _per_channel(np.float32(op.zero_point_list()), x, axis)
    return (x.astype(jnp.float32) - zp) * scale


JAX_OPS.add(q.QuantizeOp, with_op(_quantize))
JAX_OPS.add(q.DequantizeOp, with_op(_dequantize))


# Fake quantisation.


def _abs_max(op, x):
    """max|x| per channel along the op's axis (over everything per tensor)."""
    axis = op.channel_axis()
    axes = tuple(d for d in range(x.ndim) if d != axis)
    return jnp.max(jnp.abs(x), axis=axes, keepdims=True)


def _clip_range(op: q.SteOperation, x, state):
    """The clipping range r, shaped to broadcast against x."""
    mode = op.mode()
    if mode is ScaleMode.FIXED:
        return _per_channel(state, x, op.channel_axis())
    r = _abs_max(op, x)
    if mode is ScaleMode.EMA:
        decay = op.decay.value.data
        r = decay * _per_channel(state, x, op.channel_axis()) + (1 - decay) * r
    return r


def widen_state(state):
    """The range state widened as x is (None when the op has none)."""
    return None if state is None else widen(state)


def _range_and_step(op, x, state):
    """`(r, s)` as the interpreter's `step`: a range that is not > 0 (zero, negative or NaN,
    so one NaN in a channel poisons only itself) is taken as qmax, so that `s = 1`."""
    qmax = op.grid()[1]
    r = _clip_range(op, x, state).astype(x.dtype)
    r = jnp.where(r > 0, r, jnp.asarray(qmax, x.dtype))
    # Behind a barrier XLA cannot rewrite `r / qmax` as `r * (1 / qmax)` (an ulp off).
    return r, r / jax.lax.optimization_barrier(jnp.full(r.shape, qmax, x.dtype))


def _grid_value(x, s):
    """`x * (1 / s)` rounded half to even (PyTorch's multiplication by the reciprocal)."""
    return jnp.round(x * (1 / s))


def _fake_quantize(op: q.FakeQuantizeOp, *arrays):
    get = operands_of(op, arrays)
    x = widen(get(op.x))
    _, s = _range_and_step(op, x, widen_state(get(op.state)))
    qmin, qmax = op.grid()
    return (jnp.clip(_grid_value(x, s), qmin, qmax) * s).astype(get(op.x).dtype)


def _fake_quantize_backward(op: q.FakeQuantizeBackwardOp, *arrays):
    get = operands_of(op, arrays)
    x, dy = widen(get(op.x)), get(op.dy)
    ste = op.ste.data
    if ste is SteKind.IDENTITY:
        return dy
    r, s = _range_and_step(op, x, widen_state(get(op.state)))
    qmin, qmax = op.grid()
    if ste is SteKind.CLIPPED_IDENTITY:
        v = _grid_value(x, s)
        d = (v >= qmin) & (v <= qmax)
    elif ste is SteKind.HARD_TANH:
        d = jnp.abs(x) <= r
    else:
        t = jnp.tanh(x / r)
        return (widen(dy) * (1 - t * t)).astype(dy.dtype)
    return masked(dy, d)


def masked(dy, inside):
    """`dy * inside` (a 0/1 mask) as an IEEE product, as the interpreter: behind a barrier
    XLA cannot turn it into `select(inside, dy, 0)`, which loses inf * 0 = NaN and -0."""
    return (widen(dy) * jax.lax.optimization_barrier(inside.astype(widen(dy).dtype))).astype(dy.dtype)


def _lsq(op: q.LsqOperation, x, scale):
    s = _per_channel(scale, x, op.channel_axis())
    return s, jnp.round(x * (1 / s))


def _fake_quantize_lsq(op: q.FakeQuantizeLsqOp, x, scale):
    s, v = _lsq(op, x, scale)
    qmin, qmax = op.grid()
    return jnp.clip(v, qmin, qmax) * s


def _lsq_backward_x(op: q.FakeQuantizeLsqBackwardXOp, x, scale, dy):
    _, v = _lsq(op, x, scale)
    qmin, qmax = op.grid()
    return masked(dy, (v >= qmin) & (v <= qmax))


def _lsq_backward_scale(op: q.FakeQuantizeLsqBackwardScaleOp, x, scale, dy):
    """`g * sum(dy * e)` per step, `e = round(v) - v` inside the grid, qmin/qmax outside."""
    qmin, qmax = op.grid()
    s = _per_channel(scale, x, op.channel_axis())
    v = x / s
    r = jnp.round(v)
    e = jnp.where(r < qmin, qmin, jnp.where(r > qmax, qmax, r - v))
    axis = op.channel_axis()
    axes = tuple(d for d in range(x.ndim) if d != axis)
    per_step = x.size // (1 if axis is None else x.shape[axis])
    ds = jnp.sum(rounded(dy * e), axis=axes) / jnp.sqrt(jnp.asarray(per_step * qmax, x.dtype))
    return ds.reshape(scale.shape)


JAX_OPS.add(q.FakeQuantizeOp, with_op(_fake_quantize))
JAX_OPS.add(q.FakeQuantizeBackwardOp, with_op(_fake_quantize_backward))
JAX_OPS.add(q.FakeQuantizeLsqOp, with_op(_fake_quantize_lsq))
JAX_OPS.add(q.FakeQuantizeLsqBackwardXOp, with_op(_lsq_backward_x))
JAX_OPS.add(q.FakeQuantizeLsqBackwardScaleOp, with_op(_lsq_backward_scale))


# Integer contractions: exact accumulation (f64 holds these sums exactly), then requantisation.


def _requantize(op, acc):
    mult = float(np.float32(op.mult.value.data))
    return saturate(jnp.round(acc * mult) + op.out_zp.value.data, result_dtype(op))


def _centred(x, zp):
    return x.astype(jnp.float64) - zp


def _qmatmul(op: q.QMatmulOp, x, w, bias):
    acc = jnp.matmul(_centred(x, op.x_zp.value.data), _centred(w, op.w_zp.value.data))
    return _requantize(op, acc + bias.astype(jnp.float64))


def _qconv2d(op: q.QConv2dOp, x, w, bias):
    acc = conv_formulas.conv(op, _centred(x, op.x_zp.value.data), _centred(w, op.w_zp.value.data))
    return _requantize(op, acc + bias.astype(jnp.float64)[:, None, None])


JAX_OPS.add(q.QMatmulOp, with_op(_qmatmul))
JAX_OPS.add(q.QConv2dOp, with_op(_qconv2d))


# Weight decoders: `W[K, N]` from the stored operands.


def _rows(v, block: int):
    """One value per block of `block` rows, repeated over the block's rows."""
    return jnp.repeat(v, block, axis=0)


def _nibbles(packed):
    """`[K/2, N]` bytes -> `[K, N]` 4-bit codes, the low nibble first (even k)."""
    both = jnp.stack([packed & 15, packed >> 4], axis=1)
    return both.reshape(-1, *packed.shape[1:])


def _signed4(code):
    return jnp.where(code >= 8, code.astype(jnp.int32) - 16, code.astype(jnp.int32))


E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0], np.float32)
"""The magnitudes of the FP4 E2M1 codes 0..7 (bit 3 is the sign)."""


def _fp8(codes, dtype):
    return jax.lax.bitcast_convert_type(codes.astype(jnp.uint8), dtype).astype(jnp.float32)


def decode(scheme: QuantScheme, block: int | None, w_q, scale, zp):
    """The dense f32 weight `W[K, N]` of a (non-GGUF) scheme."""
    scale = widen(scale).astype(jnp.float32) if scale.dtype != jnp.uint8 else scale
    if scheme is QuantScheme.INT8_BLOCK:
        return w_q.astype(jnp.float32) * _rows(scale, block)
    if scheme is QuantScheme.INT8_BLOCK_ASYM:
        return (w_q.astype(jnp.float32) - _rows(widen(zp).astype(jnp.float32), block)) * _rows(scale, block)
    if scheme is QuantScheme.INT4_BLOCK:
        return _signed4(_nibbles(w_q)).astype(jnp.float32) * _rows(scale, block)
    if scheme in (QuantScheme.FP8_E4M3, QuantScheme.FP8_E5M2):
        dtype = jnp.float8_e4m3fn if scheme is QuantScheme.FP8_E4M3 else jnp.float8_e5m2
        return _fp8(w_q, dtype) * scale
    if scheme is QuantScheme.NVFP4_BLOCK:
        codes = _nibbles(w_q)
        value = jnp.asarray(E2M1)[codes & 7] * jnp.where(codes >= 8, -1.0, 1.0)
        return value * _rows(_fp8(scale, jnp.float8_e4m3fn), block) * widen(zp).astype(jnp.float32).reshape(())
    raise NotImplementedError(f"jax: dequant scheme {scheme}")


# GGUF: `packed` is N rows of K values in blocks; each decoder maps `[blocks, bytes]` to
# `[blocks, values]`.


def _f16(lo, hi):
    return jax.lax.bitcast_convert_type(lo.astype(jnp.uint16) | (hi.astype(jnp.uint16) << 8), jnp.float16).astype(
        jnp.float32
    )


def _i8(b):
    return jax.lax.bitcast_convert_type(b, jnp.int8).astype(jnp.int32)


def _q8_0(b):
    return _f16(b[:, 0], b[:, 1])[:, None] * _i8(b[:, 2:34])


def _q4_0(b):
    qs = b[:, 2:18].astype(jnp.int32)
    return _f16(b[:, 0], b[:, 1])[:, None] * (jnp.concatenate([qs & 15, qs >> 4], axis=1) - 8)


def _tables(fields, count: int = 256):
    """Static per-value index tables: `fields(e)` gives a tuple of ints for value e."""
    return [np.array(column) for column in zip(*(fields(e) for e in range(count)))]


def _q6_k(b):
    """ql (low 4 bits), qh (high 2 bits), 16 i8 scales, f16 d; e = 128 h + 64 s + 32 u + t."""

    def fields(e):
        h, s, u, t = e // 128, (e // 64) % 2, (e // 32) % 2, e % 32
        return 64 * h + 32 * u + t, 4 * s, 128 + 32 * h + t, 4 * s + 2 * u

    ql_at, ql_shift, qh_at, qh_shift = _tables(fields)
    v = b.astype(jnp.int32)
    low = (v[:, ql_at] >> ql_shift) & 15
    high = (v[:, qh_at] >> qh_shift) & 3
    codes = (low | (high << 4)) - 32
    scales = _i8(b[:, 192:208])[:, np.arange(256) // 16]
    return _f16(b[:, 208], b[:, 209])[:, None] * scales * codes


def _k_scales_mins(s):
    """The 6-bit scales and mins of Q4_K/Q5_K's 8 sub-blocks from their 12 bytes `s`."""
    s = s.astype(jnp.int32)
    j = np.arange(4)
    low_sc, low_m = s[:, j] & 63, s[:, j + 4] & 63
    high_sc = (s[:, j + 8] & 15) | ((s[:, j] >> 6) << 4)
    high_m = (s[:, j + 8] >> 4) | ((s[:, j + 4] >> 6) << 4)
    return jnp.concatenate([low_sc, high_sc], 1), jnp.concatenate([low_m, high_m], 1)


def _q45_k(b, qh=None):
    """Q4_K (qh None) and Q5_K: sub-block j = 2 i + p reads nibble p of qs[32 i + t]."""
    d, dmin = _f16(b[:, 0], b[:, 1]), _f16(b[:, 2], b[:, 3])
    sc, m = _k_scales_mins(b[:, 4:16])
    qs = b[:, 16:144] if qh is None else b[:, 48:176]
    sub, t = np.arange(256) // 32, np.arange(256) % 32
    codes = (qs.astype(jnp.int32)[:, 32 * (sub // 2) + t] >> (4 * (sub % 2))) & 15
    if qh is not None:
        codes = codes | (((b[:, 16:48].astype(jnp.int32)[:, t] >> sub) & 1) << 4)
    return d[:, None] * sc[:, sub] * codes - dmin[:, None] * m[:, sub]


def _q2_k(b):
    """16 scale bytes (low nibble scale, high min), qs[64], f16 d, dmin; e = 128 h + 32 s + t."""
    e = np.arange(256)
    h, s, t = e // 128, (e // 32) % 4, e % 32
    codes = (b[:, 16:80].astype(jnp.int32)[:, 32 * h + t] >> (2 * s)) & 3
    scales = b[:, :16].astype(jnp.int32)[:, e // 16]
    d, dmin = _f16(b[:, 80], b[:, 81]), _f16(b[:, 82], b[:, 83])
    return d[:, None] * (scales & 15) * codes - dmin[:, None] * (scales >> 4)


def _q3_k(b):
    """hmask[32], qs[64], 12 bytes of 6-bit scales, f16 d; e = 128 h + 32 s + t."""
    e = np.arange(256)
    h, s, t = e // 128, (e // 32) % 4, e % 32
    v = b.astype(jnp.int32)
    low = (v[:, 32:96][:, 32 * h + t] >> (2 * s)) & 3
    high = (v[:, :32][:, t] >> (4 * h + s)) & 1
    codes = low - 4 * (1 - high)
    k = np.arange(16)
    packed = v[:, 96:108]
    low_bits = (packed[:, k % 8] >> (4 * (k // 8))) & 15
    high_bits = (packed[:, 8 + k % 4] >> (2 * (k // 4))) & 3
    scales = (low_bits | (high_bits << 4)) - 32
    return _f16(b[:, 108], b[:, 109])[:, None] * scales[:, e // 16] * codes


def _q8_k(b):
    d = jax.lax.bitcast_convert_type(
        b[:, 0].astype(jnp.uint32) | (b[:, 1].astype(jnp.uint32) << 8)
        | (b[:, 2].astype(jnp.uint32) << 16) | (b[:, 3].astype(jnp.uint32) << 24),
        jnp.float32,
    )  # fmt: skip
    return d[:, None] * _i8(b[:, 4:260])


GGUF = {
    QuantScheme.GGUF_Q8_0: (32, 34, _q8_0),
    QuantScheme.GGUF_Q4_0: (32, 18, _q4_0),
    QuantScheme.GGUF_Q6_K: (256, 210, _q6_k),
    QuantScheme.GGUF_Q4_K: (256, 144, _q45_k),
    QuantScheme.GGUF_Q5_K: (256, 176, lambda b: _q45_k(b, qh=True)),
    QuantScheme.GGUF_Q2_K: (256, 84, _q2_k),
    QuantScheme.GGUF_Q3_K: (256, 110, _q3_k),
    QuantScheme.GGUF_Q8_K: (256, 292, _q8_k),
}
"""`scheme -> (values per block, bytes per block, decoder)`."""


def decode_gguf(scheme: QuantScheme, packed, k: int):
    """The `[N, K]` f32 rows of a GGUF tensor of N rows of K values."""
    values, size, decoder = GGUF[scheme]
    blocks = packed.reshape(-1, size)
    return decoder(blocks).reshape(-1, k)


def _dequant_matmul(op: q.DequantMatmulOp, x, w_q, *params):
    scheme = op.quant_scheme()
    if scheme.is_gguf:
        w = decode_gguf(scheme, w_q, x.shape[-1]).T
    else:
        w = decode(scheme, op.block(), w_q, *params)
    acc = widen(x)
    return jnp.matmul(acc, w.astype(acc.dtype))


JAX_OPS.add(q.DequantMatmulOp, with_op(_dequant_matmul))
