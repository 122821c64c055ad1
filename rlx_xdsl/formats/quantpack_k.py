"""Packing rows of weights into GGML's K-quant super-blocks (Q2_K … Q8_K), byte for byte
the layout a GGUF file stores and `mir.dequant_matmul` (and every GGUF reader) decodes.

A super-block holds 256 values in sub-blocks of 16 or 32, each with its own scale
(and, for Q2_K/Q4_K/Q5_K, its own min), quantised against one f16 super-scale `d`
(and `dmin`). The layouts are llama.cpp's `block_q*_K` structs (ggml-common.h).

Scales are chosen so that no value is ever clipped: each sub-block's step is rounded
*up* to the next representable one, so every value is within half a step of its code.
That bounds the error per value by `step / 2`, where `step ≤ ideal step + d`. (llama.cpp's
`quantize_row_q*_K_ref` instead searches for the scale minimising the squared error; its
bytes differ, its layout and decoding do not. See docs/quantization.md.)
"""

from __future__ import annotations

import numpy as np

QK_K = 256


def _f16_up(x: np.ndarray) -> np.ndarray:
    """The f16 nearest to `x`, nudged up so that it is never below `x` (x ≥ 0)."""
    h = np.asarray(x, np.float32).astype(np.float16)
    low = h.astype(np.float32) < x
    return np.where(low, np.nextafter(h, np.float16(np.inf)), h).astype(np.float16)


def _f16_bytes(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float16).view(np.uint8).reshape(-1, 2)


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """`num / den`, 0 where `den` is 0."""
    return np.where(den > 0, num / np.where(den > 0, den, 1), 0)


def _super_scale(step: np.ndarray, top: int) -> tuple[np.ndarray, np.ndarray]:
    """Super-block f16 scale `d` and sub-block codes `sc ≤ top` with `d · sc ≥ step`."""
    d = _f16_up(step.max(axis=-1) / top)
    df = d.astype(np.float32)[:, None]
    sc = np.minimum(top, np.ceil(_ratio(step, df) * (1 - 1e-7))).astype(np.uint8)
    sc = np.where(df * sc < step, np.minimum(top, sc + 1), sc).astype(np.uint8)
    return d, sc


def _symmetric(x: np.ndarray, sub: int, bits: int, top: int):
    """Codes in `[-2^(bits-1), 2^(bits-1) - 1]` of sub-blocks of `sub` values with a
    positive scale code `≤ top` each: `(d, sc [n, 256/sub], q [n, 256/sub, sub])`."""
    half = 2 ** (bits - 1)
    blocks = x.reshape(len(x), QK_K // sub, sub)
    step = np.abs(blocks).max(axis=-1) / (half - 0.5)
    d, sc = _super_scale(step, top)
    real = d.astype(np.float32)[:, None] * sc
    q = np.clip(np.rint(_ratio(blocks, real[..., None])), -half, half - 1).astype(np.int8)
    return d, sc, q


def _asymmetric(x: np.ndarray, sub: int, levels: int, top: int):
    """Codes `0 … levels` with `value = d·sc·q − dmin·m` (the min `m·dmin ≥ −min(x, 0)`
    rounded up): `(d, dmin, sc, m, q)`."""
    blocks = x.reshape(len(x), QK_K // sub, sub)
    low = np.maximum(0, -blocks.min(axis=-1))
    dmin, m = _super_scale(low, top)
    offset = dmin.astype(np.float32)[:, None] * m
    step = (blocks.max(axis=-1) + offset).clip(0) / levels
    d, sc = _super_scale(step, top)
    real = d.astype(np.float32)[:, None] * sc
    q = np.clip(np.rint(_ratio(blocks + offset[..., None], real[..., None])), 0, levels).astype(np.uint8)
    return d, dmin, sc, m, q


def _two_bits(q: np.ndarray) -> np.ndarray:
    """Codes `[n, 256]` (0…3) to `qs [n, 64]`: value `128 h + 32 s + t` is bits `2 s` of `qs[32 h + t]`."""
    q = q.reshape(len(q), 2, 4, 32).astype(np.uint8)
    return (q << (2 * np.arange(4, dtype=np.uint8)).reshape(4, 1)).sum(axis=2, dtype=np.uint8).reshape(len(q), 64)


def _six_bit_pairs(sc: np.ndarray, m: np.ndarray) -> np.ndarray:
    """Q4_K/Q5_K's 12 bytes holding 8 six-bit scales and 8 six-bit mins."""
    low = sc[:, :4] | ((sc[:, 4:] >> 4) << 6)
    high = m[:, :4] | ((m[:, 4:] >> 4) << 6)
    tail = (sc[:, 4:] & 15) | ((m[:, 4:] & 15) << 4)
    return np.concatenate([low, high, tail], axis=1).astype(np.uint8)


def q2_k(x: np.ndarray) -> np.ndarray:
    """`block_q2_K`: scales[16] (scale low nibble, min high nibble), qs[64], d, dmin."""
    d, dmin, sc, m, q = _asymmetric(x, 16, 3, 15)
    return np.concatenate([sc | (m << 4), _two_bits(q), _f16_bytes(d), _f16_bytes(dmin)], axis=1)


def q3_k(x: np.ndarray) -> np.ndarray:
    """`block_q3_K`: hmask[32], qs[64], scales[12] (6-bit, biased by 32), d."""
    d, sc, q = _symmetric(x, 16, 3, 31)
    u = (q.reshape(len(x), QK_K) + 4).astype(np.uint8)  # 0…7: low 2 bits and the high bit
    high = (u >> 2).reshape(len(x), 8, 32)
    hmask = (high << np.arange(8, dtype=np.uint8).reshape(8, 1)).sum(axis=1, dtype=np.uint8)
    s = (sc.astype(np.int16) + 32).astype(np.uint8)
    nibbles = (s[:, :8] & 15) | ((s[:, 8:] & 15) << 4)
    tops = ((s >> 4).reshape(len(x), 4, 4) << (2 * np.arange(4, dtype=np.uint8)).reshape(4, 1))
    return np.concatenate([hmask, _two_bits(u & 3), nibbles, tops.sum(axis=1, dtype=np.uint8), _f16_bytes(d)], axis=1)


def q4_k(x: np.ndarray) -> np.ndarray:
    """`block_q4_K`: d, dmin, scales[12], qs[128] (sub-block `2 i + p` in nibble p of `qs[32 i + t]`)."""
    d, dmin, sc, m, q = _asymmetric(x, 32, 15, 63)
    q = q.reshape(len(x), 4, 2, 32)
    qs = (q[:, :, 0] | (q[:, :, 1] << 4)).reshape(len(x), 128)
    return np.concatenate([_f16_bytes(d), _f16_bytes(dmin), _six_bit_pairs(sc, m), qs], axis=1)


def q5_k(x: np.ndarray) -> np.ndarray:
    """`block_q5_K`: Q4_K's fields with `qh[32]` (bit j of `qh[t]`: bit 4 of sub-block j's value t) before `qs`."""
    d, dmin, sc, m, q = _asymmetric(x, 32, 31, 63)
    qh = ((q >> 4) << np.arange(8, dtype=np.uint8).reshape(8, 1)).sum(axis=1, dtype=np.uint8)
    low = (q & 15).reshape(len(x), 4, 2, 32)
    qs = (low[:, :, 0] | (low[:, :, 1] << 4)).reshape(len(x), 128)
    return np.concatenate([_f16_bytes(d), _f16_bytes(dmin), _six_bit_pairs(sc, m), qh, qs], axis=1)


def q6_k(x: np.ndarray) -> np.ndarray:
    """`block_q6_K`: ql[128], qh[64], scales[16] (int8), d; value `128 h + 64 s + 32 u + t`
    has its low nibble in nibble s of `ql[64 h + 32 u + t]`, its top 2 bits at bit
    `4 s + 2 u` of `qh[32 h + t]`."""
    d, sc, q = _symmetric(x, 16, 6, 127)
    u = (q.reshape(len(x), 2, 2, 2, 32).astype(np.int16) + 32).astype(np.uint8)  # [h, s, u, t]
    ql = ((u[:, :, 0] & 15) | ((u[:, :, 1] & 15) << 4)).reshape(len(x), 128)
    shifts = (4 * np.arange(2)[:, None] + 2 * np.arange(2)[None, :]).astype(np.uint8).reshape(2, 2, 1)
    qh = ((u >> 4) << shifts).sum(axis=(2, 3), dtype=np.uint8).reshape(len(x), 64)
    return np.concatenate([ql, qh, sc.astype(np.int8).view(np.uint8), _f16_bytes(d)], axis=1)


def q8_k(x: np.ndarray) -> np.ndarray:
    """`block_q8_K`: an f32 `d`, qs[256] (int8), bsums[16] (int16 sums of each 16 codes)."""
    d = (np.abs(x).max(axis=1) / 127).astype(np.float32)
    q = np.clip(np.rint(_ratio(x, d[:, None])), -127, 127).astype(np.int8)
    bsums = np.ascontiguousarray(q.reshape(len(x), 16, 16).sum(axis=-1, dtype=np.int16), "<i2")
    return np.concatenate([d.view(np.uint8).reshape(-1, 4), q.view(np.uint8), bsums.view(np.uint8)], axis=1)


PACKERS = {
    "gguf_q2_k": q2_k,
    "gguf_q3_k": q3_k,
    "gguf_q4_k": q4_k,
    "gguf_q5_k": q5_k,
    "gguf_q6_k": q6_k,
    "gguf_q8_k": q8_k,
}
"""Scheme -> packer of `[n, 256]` f32 super-blocks to `[n, block bytes]` ui8."""
