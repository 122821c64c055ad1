"""`mir.dequant_matmul`'s GGUF schemes against the `gguf` package (llama.cpp's Python
reader): GGUF tensor bytes made by its `quantize`, and random blocks, decoded by its
`dequantize`. `gguf` is a test dependency."""

import gguf
import numpy as np
import pytest
from gguf import quants

from rlx_xdsl.testing.oracles import run_op

RNG = np.random.default_rng(2022)
TYPES = {"gguf_q8_0": gguf.GGMLQuantizationType.Q8_0, "gguf_q4_0": gguf.GGMLQuantizationType.Q4_0,
         "gguf_q6_k": gguf.GGMLQuantizationType.Q6_K, "gguf_q4_k": gguf.GGMLQuantizationType.Q4_K,
         "gguf_q5_k": gguf.GGMLQuantizationType.Q5_K, "gguf_q2_k": gguf.GGMLQuantizationType.Q2_K,
         "gguf_q3_k": gguf.GGMLQuantizationType.Q3_K}  # fmt: skip
QUANTISABLE = ["gguf_q4_0", "gguf_q8_0"]
"""The types gguf's `quantize` implements (the K-quants: random blocks, and `quantpack`'s
bytes checked by round trip below)."""
SCALES_AT = {"gguf_q8_0": (0,), "gguf_q4_0": (0,), "gguf_q6_k": (208,), "gguf_q4_k": (0, 2), "gguf_q5_k": (0, 2),
             "gguf_q2_k": (80, 82), "gguf_q3_k": (108,)}  # fmt: skip
"""Where a block keeps its f16 scales (`d`, and Q4_K's `dmin`)."""


@pytest.mark.parametrize("scheme", QUANTISABLE)
def test_gguf_bytes_made_by_gguf_quantize(scheme):
    """A GGUF file's tensor bytes, unchanged: rows of K values in GGML blocks."""
    w = RNG.standard_normal((5, 96)).astype(np.float32)
    packed = quants.quantize(w, TYPES[scheme])
    x = RNG.standard_normal((3, 96)).astype(np.float32)
    y = run_op("dequant_matmul", [x, packed.reshape(-1)], scheme=scheme)
    weights = quants.dequantize(packed, TYPES[scheme])
    np.testing.assert_allclose(y, x.astype(np.float64) @ weights.T.astype(np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheme", sorted(TYPES))
def test_random_gguf_blocks_decode_as_gguf_does(scheme):
    """Random codes with sane f16 scales; x = I reads the decoded weights exactly."""
    values, size = gguf.GGML_QUANT_SIZES[TYPES[scheme]]
    blocks = RNG.integers(0, 256, (4 * 2, size)).astype(np.uint8)
    for at in SCALES_AT[scheme]:
        blocks[:, at : at + 2] = RNG.uniform(-2, 2, 8).astype(np.float16).view(np.uint8).reshape(-1, 2)
    packed = blocks.reshape(4, 2 * size)
    k = 2 * values
    y = run_op("dequant_matmul", [np.eye(k, dtype=np.float32), packed.reshape(-1)], scheme=scheme)
    np.testing.assert_array_equal(y, quants.dequantize(packed, TYPES[scheme]).T)


@pytest.mark.parametrize("scheme", QUANTISABLE)
def test_quantpack_writes_the_bytes_gguf_writes(scheme):
    """`rlx_xdsl.formats.quantpack` packs a weight `[K, N]` as GGUF's rows of K values."""
    from rlx_xdsl.formats.quantpack import pack

    w = RNG.standard_normal((64, 5)).astype(np.float32)
    expected = quants.quantize(w.T, TYPES[scheme]).reshape(-1)
    got = pack(w, scheme)["q"]
    assert got.shape == expected.shape
    np.testing.assert_array_equal(quants.dequantize(got.reshape(5, -1), TYPES[scheme]),
                                  quants.dequantize(expected.reshape(5, -1), TYPES[scheme]))  # fmt: skip


def test_q8_k_blocks_are_an_f32_scale_times_int8_codes():
    """gguf has no Q8_K reader: llama.cpp's `block_q8_K {float d; int8 qs[256]; int16 bsums[16]}`
    read with a numpy structured dtype."""
    layout = np.dtype([("d", "<f4"), ("qs", "i1", 256), ("bsums", "<i2", 16)])
    assert layout.itemsize == 292
    blocks = np.zeros(4, layout)
    blocks["d"] = RNG.uniform(-1, 1, 4)
    blocks["qs"] = RNG.integers(-128, 128, (4, 256))
    blocks["bsums"] = RNG.integers(-1000, 1000, (4, 16))
    weights = (blocks["d"][:, None] * blocks["qs"]).reshape(2, 512)
    y = run_op("dequant_matmul", [np.eye(512, dtype=np.float32), blocks.view(np.uint8)], scheme="gguf_q8_k")
    np.testing.assert_array_equal(y, weights.T)


K_QUANTS = {  # scheme: (values per sub-block, code levels, largest sub-scale code, asymmetric)
    "gguf_q2_k": (16, 3, 15, True), "gguf_q3_k": (16, 7, 31, False), "gguf_q4_k": (32, 15, 63, True),
    "gguf_q5_k": (32, 31, 63, True), "gguf_q6_k": (16, 63, 127, False)}  # fmt: skip


def k_quant_bound(w: np.ndarray, scheme: str) -> np.ndarray:
    """Half the largest step a packer that never clips may use, per value of `w [N, K]`:
    the sub-block's ideal step (its range over the code levels, the min rounded up by at
    most one `dmin`) plus one super-block `d` (a sub-scale rounded up), f16 slack included."""
    sub, levels, top, asymmetric = K_QUANTS[scheme]
    blocks = w.reshape(-1, 256 // sub, sub).astype(np.float64)
    slack = 1 + 2.0**-9
    if asymmetric:
        low = np.maximum(0, -blocks.min(axis=-1))
        dmin = low.max(axis=-1, keepdims=True) / top * slack
        step = (blocks.max(axis=-1) + low + dmin).clip(0) / levels
    else:
        step = np.abs(blocks).max(axis=-1) / (levels / 2)
    d = step.max(axis=-1, keepdims=True) / top * slack
    return np.repeat(0.5 * (step + d) * slack, sub, axis=-1).reshape(w.shape)


@pytest.mark.parametrize("scheme", sorted(K_QUANTS))
def test_quantpack_k_quants_round_trip_through_gguf_dequantize(scheme):
    """gguf has no K-quant `quantize`: `pack`'s bytes, read by gguf's `dequantize`, are
    within half a step of the weights (no value clipped), and the op decodes them exactly
    as gguf does. Columns of different magnitudes and one all-zero column."""
    from rlx_xdsl.formats.quantpack import pack

    w = RNG.standard_normal((512, 4)).astype(np.float32) * np.float32([1, 0.01, 30, 0])
    w[:, 1] += 0.02  # a column with no negative values
    packed = pack(w, scheme)["q"]
    assert packed.size == 4 * 2 * gguf.GGML_QUANT_SIZES[TYPES[scheme]][1]
    decoded = quants.dequantize(packed.reshape(4, -1), TYPES[scheme])
    assert np.all(np.abs(decoded - w.T) <= k_quant_bound(w.T, scheme))
    y = run_op("dequant_matmul", [np.eye(512, dtype=np.float32), packed], scheme=scheme)
    np.testing.assert_array_equal(y, decoded.T)


def test_quantpack_q8_k_is_llama_cpps_block_q8_k():
    """Q8_K read as llama.cpp's struct: within half a step `max|w| / 127 / 2` of the
    weights, `bsums` the sums of each 16 codes; the op decodes the same weights."""
    from rlx_xdsl.formats.quantpack import pack

    w = RNG.standard_normal((256, 3)).astype(np.float32) * np.float32([1, 5, 0])
    packed = pack(w, "gguf_q8_k")["q"]
    blocks = packed.view(np.dtype([("d", "<f4"), ("qs", "i1", 256), ("bsums", "<i2", 16)]))
    decoded = (blocks["d"][:, None] * blocks["qs"]).reshape(3, 256)
    half_step = np.abs(w).max(axis=0)[:, None] / 254 * (1 + 1e-6)
    assert np.all(np.abs(decoded - w.T) <= half_step)
    np.testing.assert_array_equal(blocks["bsums"], blocks["qs"].reshape(3, 16, 16).sum(axis=-1))
    y = run_op("dequant_matmul", [np.eye(256, dtype=np.float32), packed], scheme="gguf_q8_k")
    np.testing.assert_array_equal(y, decoded.T)
