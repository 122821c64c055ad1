"""Quantisation MIR ops against independent oracles: ONNX's reference implementation
(QuantizeLinear, DequantizeLinear) and PyTorch's fake-quantize functions, forward and backward."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.autodiff.rules.mir.quant import quantized_weight_bits
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import quant
from rlx_xdsl.formats import quantformats
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(22)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-quant.mlir"

# Values on rounding ties (x / scale = k + 0.5), past saturation, and ordinary ones.
X = np.concatenate(
    [np.float32([1.25, -0.75, 0.25, -0.25, 300.0, -300.0]), (RNG.standard_normal(18) * 20).astype(np.float32)]
).reshape(4, 6)


def onnx_quantize(x, scales, zero_points, axis=None, storage=np.int8):
    extra = {} if axis is None else {"axis": axis}
    scale = np.asarray(scales, np.float32).reshape(-1 if axis is not None else ())
    zero = np.asarray(zero_points, storage).reshape(scale.shape)
    return onnx_run("QuantizeLinear", [x, scale, zero], **extra)


def onnx_dequantize(q, scales, zero_points, axis=None):
    extra = {} if axis is None else {"axis": axis}
    scale = np.asarray(scales, np.float32).reshape(-1 if axis is not None else ())
    zero = np.asarray(zero_points, q.dtype).reshape(scale.shape)
    return onnx_run("DequantizeLinear", [q, scale, zero], **extra)


QUANTISATIONS = [
    # (scales, zero_points, axis, storage)
    ([0.5], [0], None, np.int8),
    ([0.5], [-7], None, np.int8),
    ([0.25], [200], None, np.uint8),
    ([0.5, 0.25, 1.0, 2.0], [0, 3, -3, 127], 0, np.int8),
    ([0.5, 0.25, 1.0, 2.0, 0.125, 4.0], [0, 128, 255, 1, 2, 3], 1, np.uint8),
    ([0.5, 0.25, 1.0, 2.0, 0.125, 4.0], [0, 1, 2, 3, 4, 5], -1, np.int8),
]


@pytest.mark.parametrize(("scales", "zero_points", "axis", "storage"), QUANTISATIONS)
def test_quantize_and_dequantize_match_onnx(scales, zero_points, axis, storage):
    q = run_op("quantize", [X], scales=scales, zero_points=zero_points, axis=axis)
    expected = onnx_quantize(X, scales, zero_points, axis, storage)
    assert q.dtype == storage
    np.testing.assert_array_equal(q, expected)
    x = run_op("dequantize", [q], scales=scales, zero_points=zero_points, axis=axis)
    assert x.dtype == np.float32
    np.testing.assert_array_equal(x, onnx_dequantize(expected, scales, zero_points, axis))


def test_quantize_rounds_ties_to_even_and_saturates():
    q = run_op("quantize", [np.float32([1.25, -0.75, 0.75, 1000.0, -1000.0])], scales=[0.5])
    np.testing.assert_array_equal(q, np.int8([2, -2, 2, 127, -128]))


def test_quantize_widens_half_precision_operands():
    x = X.astype(ml_dtypes.bfloat16)
    q = run_op("quantize", [x], scales=[0.25], zero_points=[1])
    np.testing.assert_array_equal(q, onnx_quantize(x.astype(np.float32), [0.25], [1]))


def test_quantize_maps_nan_to_the_zero_point():
    q = run_op("quantize", [np.float32([np.nan, 1.0])], scales=[1.0], zero_points=[5])
    np.testing.assert_array_equal(q, np.int8([5, 6]))


def test_zero_points_default_to_zero():
    np.testing.assert_array_equal(run_op("quantize", [X], scales=[0.5]), onnx_quantize(X, [0.5], [0]))


@pytest.mark.parametrize(
    ("op", "shape", "dtype", "attributes", "message"),
    [
        ("quantize", [2, 3], "f32", {"scales": [1.0, 2.0], "axis": 1},
         "'mir.quantize' has 2 scales but dim 1 of the operand has 3 channels"),
        ("quantize", [2, 3], "f32", {"scales": [1.0], "zero_points": [0, 1]},
         "'mir.quantize' has 1 scales but 2 zero points"),
        ("quantize", [2], "f32", {"scales": [float("inf")]}, "'mir.quantize' scales must be positive and finite"),
        ("dequantize", [2], "ui8", {"scales": [1.0], "zero_points": [-1]},
         r"'mir.dequantize' zero point -1 is outside the range of ui8 \[0, 255\]"),
    ],
)  # fmt: skip
def test_builder_rejects_bad_quantisations(op, shape, dtype, attributes, message):
    with pytest.raises(VerifyException, match=message):
        build_op(op, [shape], dtype, **attributes)


def test_the_integer_type_follows_the_zero_points():
    assert quant.storage_for([0, 127, -128]) == "i8"
    assert quant.storage_for([0, 128]) == "ui8"
    assert quant.storage_for([-1, 128]) is None


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


# --- fake quantisation against PyTorch's fake-quantize functions ---------------------------

DY = RNG.standard_normal(X.shape).astype(np.float32)


def torch_fake_quantize(x, step, bits, axis=None):
    """PyTorch's symmetric fake quantisation with the given step(s), zero point 0."""
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    xt = torch.tensor(x)
    if axis is None:
        return torch.fake_quantize_per_tensor_affine(xt, float(step), 0, qmin, qmax).numpy()
    zeros = torch.zeros(len(step), dtype=torch.int32)
    axis %= x.ndim
    return torch.fake_quantize_per_channel_affine(xt, torch.tensor(step), zeros, axis, qmin, qmax).numpy()


def steps(r, bits):
    """`s = r / qmax`, the documented step of a range r (in f32)."""
    return (np.asarray(r, np.float32) / np.float32((1 << (bits - 1)) - 1)).astype(np.float32)


@pytest.mark.parametrize(("bits", "axis"), [(8, None), (4, None), (2, None), (3, 1), (5, 0), (4, -1)])
def test_fake_quantize_per_batch_is_pytorchs_with_the_max_abs_step(bits, axis):
    y = run_op("fake_quantize", [X], bits=bits, axis=axis)
    if axis is None:
        step = steps(np.abs(X).max(), bits)
    else:
        step = steps(np.abs(X).max(axis=1 - (axis % 2)), bits)
    np.testing.assert_array_equal(y, torch_fake_quantize(X, step, bits, axis))


def test_fake_quantize_fixed_and_ema_ranges():
    state = np.float32([3.0, 0.5, 1.0, 8.0, 2.0, 0.25])
    fixed = run_op("fake_quantize", [X, state], bits=4, axis=1, scale_mode="fixed")
    np.testing.assert_array_equal(fixed, torch_fake_quantize(X, steps(state, 4), 4, 1))
    ema = run_op("fake_quantize", [X, state], bits=4, axis=1, scale_mode="ema", decay=0.75)
    r = np.float32(0.75) * state + np.float32(0.25) * np.abs(X).max(axis=0)
    np.testing.assert_array_equal(ema, torch_fake_quantize(X, steps(r, 4), 4, 1))
    assert not np.array_equal(fixed, ema)


def test_fake_quantize_of_a_zero_range_uses_a_unit_step():
    zeros = np.zeros((2, 3), np.float32)
    np.testing.assert_array_equal(run_op("fake_quantize", [zeros], bits=4), zeros)
    x = np.float32([0.4, 0.6, -2.5, 100.0])
    y = run_op("fake_quantize", [x, np.float32([0.0])], bits=4, scale_mode="fixed")
    np.testing.assert_array_equal(y, torch_fake_quantize(x, 1.0, 4))


def test_fake_quantize_keeps_half_dtypes():
    x = X.astype(np.float16)
    y = run_op("fake_quantize", [x], bits=4)
    assert y.dtype == np.float16
    expected = torch_fake_quantize(x.astype(np.float32), steps(np.abs(x.astype(np.float32)).max(), 4), 4)
    np.testing.assert_array_equal(y, expected.astype(np.float16))


def torch_input_grad(fn, x):
    xt = torch.tensor(x, requires_grad=True)
    fn(xt).backward(torch.tensor(DY))
    return xt.grad.numpy()


def test_fake_quantize_backward_kinds():
    state = np.float32([1.5])
    props = {"bits": 3, "scale_mode": "fixed"}
    step = float(steps(1.5, 3))

    def backward(ste):
        return run_op("fake_quantize_backward", [X, DY, state], ste=ste, **props)

    np.testing.assert_array_equal(backward("identity"), DY)
    clipped = torch_input_grad(lambda x: torch.fake_quantize_per_tensor_affine(x, step, 0, -4, 3), X)
    np.testing.assert_array_equal(backward("clipped_identity"), clipped)
    hard = torch_input_grad(lambda x: 1.5 * torch.nn.functional.hardtanh(x / 1.5), X)
    np.testing.assert_array_equal(backward("hard_tanh"), hard)
    soft = torch_input_grad(lambda x: 1.5 * torch.tanh(x / 1.5), X)
    np.testing.assert_allclose(backward("tanh"), soft, rtol=1e-6, atol=1e-6)


def torch_lsq(x, scale, bits, axis, dy):
    qmin, qmax = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
    n = x.size if axis is None else x.size // x.shape[axis]
    factor = float(1 / np.sqrt(n * qmax))
    xt, st = torch.tensor(x, requires_grad=True), torch.tensor(scale, requires_grad=True)
    if axis is None:
        y = torch._fake_quantize_learnable_per_tensor_affine(xt, st, torch.zeros(1), qmin, qmax, factor)
    else:
        zeros = torch.zeros(len(scale))
        y = torch._fake_quantize_learnable_per_channel_affine(xt, st, zeros, axis, qmin, qmax, factor)
    y.backward(torch.tensor(dy))
    return y.detach().numpy(), xt.grad.numpy(), st.grad.numpy()


@pytest.mark.parametrize(("bits", "axis", "scale"), [
    (4, None, [0.3]), (2, None, [0.5]), (8, None, [0.01]), (3, 0, [0.3, 0.2, 0.5, 1.0]),
    (4, 1, [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]),
])  # fmt: skip
def test_lsq_forward_and_backward_are_pytorchs(bits, axis, scale):
    scale = np.float32(scale)
    y, dx, ds = torch_lsq(X, scale, bits, axis, DY)
    props = {"bits": bits, "axis": axis}
    np.testing.assert_array_equal(run_op("fake_quantize_lsq", [X, scale], **props), y)
    np.testing.assert_array_equal(run_op("fake_quantize_lsq_backward_x", [X, scale, DY], **props), dx)
    np.testing.assert_allclose(run_op("fake_quantize_lsq_backward_scale", [X, scale, DY], **props), ds, rtol=1e-5)


def test_lsq_accepts_a_rank_0_scale():
    scale = np.float32(0.3)
    y, _, ds = torch_lsq(X, scale.reshape(1), 4, None, DY)
    np.testing.assert_array_equal(run_op("fake_quantize_lsq", [X, scale], bits=4), y)
    out = run_op("fake_quantize_lsq_backward_scale", [X, scale, DY], bits=4)
    assert out.shape == ()
    np.testing.assert_allclose(out, ds[0], rtol=1e-5)


def test_quantized_weight_bits_reads_the_fake_quantisation():
    b = GraphBuilder("f")
    x, s = b.input("x", [2, 3]), b.input("s", [1])
    fq, lsq, plain = b.mir.fake_quantize(x, bits=5), b.mir.fake_quantize_lsq(x, s, bits=3), b.mir.relu(x)
    assert [quantized_weight_bits(v) for v in (fq, lsq, plain, x)] == [5, 3, None, None]


# --- integer matmul and convolution against ONNX QLinearMatMul / QLinearConv -----------------

XS, WS, YS = np.float32(0.05), np.float32(0.02), np.float32(0.03)
MULT = float(np.float32(XS * WS / YS))  # ONNX's multiplier, computed in f32 as its reference does


def int8s(shape, dtype):
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize(("x_dtype", "w_dtype", "x_zp", "w_zp", "out_zp", "out_dtype"), [
    (np.int8, np.int8, 0, 0, 0, np.int8),
    (np.int8, np.uint8, 3, 130, -5, np.int8),
    (np.uint8, np.int8, 128, -2, 200, np.uint8),
])  # fmt: skip
def test_qmatmul_matches_qlinearmatmul(x_dtype, w_dtype, x_zp, w_zp, out_zp, out_dtype):
    x, w = int8s((2, 3, 7), x_dtype), int8s((7, 4), w_dtype)
    y = run_op("qmatmul", [x, w, np.zeros(4, np.int32)], x_zp=x_zp, w_zp=w_zp, out_zp=out_zp, mult=MULT)
    zps = [x_dtype(x_zp), w_dtype(w_zp), out_dtype(out_zp)]
    expected = onnx_run("QLinearMatMul", [x, XS, zps[0], w, WS, zps[1], YS, zps[2]], opset=21)
    assert y.dtype == out_dtype
    np.testing.assert_array_equal(y, expected)
    assert len(np.unique(y)) > 3  # not all saturated


def test_qmatmul_bias_is_qlinearconvs_with_a_1x1_kernel():
    """QLinearMatMul has no bias; a 1x1 QLinearConv over `[1, K, M, 1]` is the same product with one."""
    x, w, bias = int8s((5, 6), np.int8), int8s((6, 3), np.int8), RNG.integers(-2000, 2000, 3).astype(np.int32)
    y = run_op("qmatmul", [x, w, bias], x_zp=-1, w_zp=2, out_zp=4, mult=MULT)
    conv = onnx_run(
        "QLinearConv",
        [x.T[None, :, :, None], XS, np.int8(-1), w.T[:, :, None, None], WS, np.int8(2), YS, np.int8(4), bias],
        opset=21,
    )
    np.testing.assert_array_equal(y, conv[0, :, :, 0].T)


@pytest.mark.parametrize(("window", "groups"), [
    ({"kernel_size": [3, 3], "padding": [1, 1]}, 1),
    ({"kernel_size": [3, 2], "stride": [2, 1], "dilation": [1, 2], "padding": [1, 0]}, 2),
])  # fmt: skip
def test_qconv2d_matches_qlinearconv(window, groups):
    kh, kw = window["kernel_size"]
    x, w = int8s((2, 4, 6, 7), np.uint8), int8s((6, 4 // groups, kh, kw), np.int8)
    bias = RNG.integers(-500, 500, 6).astype(np.int32)
    y = run_op("qconv2d", [x, w, bias], groups=groups, x_zp=120, w_zp=-2, out_zp=200, mult=MULT, **window)
    ph, pw = window.get("padding", [0, 0])
    attrs = {"kernel_shape": [kh, kw], "pads": [ph, pw, ph, pw], "strides": window.get("stride", [1, 1]),
             "dilations": window.get("dilation", [1, 1]), "group": groups}  # fmt: skip
    zps = [np.uint8(120), np.int8(-2), np.uint8(200)]
    expected = onnx_run("QLinearConv", [x, XS, zps[0], w, WS, zps[1], YS, zps[2], bias], opset=21, **attrs)
    assert y.dtype == np.uint8
    np.testing.assert_array_equal(y, expected)


# --- dequant_matmul against ml_dtypes' FP8/FP4 and numpy's own integer unpacking ------------


def signed_nibbles(packed):
    """Two's-complement 4-bit values, low nibble first along K, by int8 shifts."""
    as_int = packed.astype(np.int8)
    low, high = (as_int << 4) >> 4, as_int >> 4
    return np.stack([low, high], axis=1).reshape(-1, packed.shape[1]).astype(np.float32)


def fp4_codes(packed):
    codes = np.stack([packed & 0x0F, packed >> 4], axis=1).reshape(-1, packed.shape[1])
    return codes.view(ml_dtypes.float4_e2m1fn).astype(np.float32)


XQ = RNG.standard_normal((3, 32)).astype(np.float32)


def check_dequant(scheme, w_q, scale, zp, weights, **props):
    y = run_op("dequant_matmul", [XQ, w_q, scale, zp], scheme=scheme, **props)
    np.testing.assert_allclose(y, XQ.astype(np.float64) @ weights.astype(np.float64), rtol=1e-5, atol=1e-4)


def test_dequant_matmul_int8_blocks():
    w_q, scale = int8s((32, 5), np.int8), RNG.random((4, 5)).astype(np.float32)
    check_dequant("int8_block", w_q, scale, np.zeros(1, np.float32), w_q * np.repeat(scale, 8, 0), block_size=8)
    zp = RNG.standard_normal((4, 5)).astype(np.float32)
    weights = (w_q - np.repeat(zp, 8, 0)) * np.repeat(scale, 8, 0)
    check_dequant("int8_block_asym", w_q, scale, zp, weights, block_size=8)


def test_dequant_matmul_int4_blocks_read_the_low_nibble_first():
    w_q, scale = int8s((16, 5), np.uint8), RNG.random((8, 5)).astype(np.float32)
    check_dequant("int4_block", w_q, scale, np.zeros(1, np.float32), signed_nibbles(w_q) * np.repeat(scale, 4, 0),
                  block_size=4)  # fmt: skip
    # One byte, two weights: 0x8F holds 15 -> -1 (low, k = 0) and 8 -> -8 (high, k = 1).
    y = run_op("dequant_matmul", [np.float32([[1.0, 10.0]]), np.uint8([[0x8F]]), np.float32([[1.0]]),
                                  np.zeros(1, np.float32)], scheme="int4_block", block_size=2)  # fmt: skip
    np.testing.assert_array_equal(y, [[-1.0 - 80.0]])


@pytest.mark.parametrize(("scheme", "dtype"), [("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2)])
def test_dequant_matmul_fp8_is_ml_dtypes_decoding(scheme, dtype):
    w_q = int8s((32, 4), np.uint8)
    w_q[(w_q & 0x7F) >= (0x78 if scheme == "fp8_e4m3" else 0x7C)] = 0x11  # no NaN/inf in the product
    decoded = w_q.view(dtype).astype(np.float32)
    for scale in (np.float32([0.5]), RNG.random(4).astype(np.float32)):
        check_dequant(scheme, w_q, scale, np.zeros(1, np.float32), decoded * scale.reshape(1, -1))


def test_dequant_matmul_fp8_decodes_every_finite_code_as_ml_dtypes():
    """One weight row per finite code; x = I picks each row exactly (a NaN or inf weight
    would reach every output through its zero products)."""
    for scheme, dtype in (("fp8_e4m3", ml_dtypes.float8_e4m3fn), ("fp8_e5m2", ml_dtypes.float8_e5m2)):
        all_codes = np.arange(256, dtype=np.uint8)
        codes = all_codes[np.isfinite(all_codes.view(dtype).astype(np.float32))].reshape(-1, 1)
        eye = np.eye(len(codes), dtype=np.float32)
        y = run_op("dequant_matmul", [eye, codes, np.float32([1.0]), np.zeros(1, np.float32)], scheme=scheme)
        np.testing.assert_array_equal(y, codes.view(dtype).astype(np.float32))


def test_dequant_matmul_nvfp4_is_e2m1_times_e4m3_block_scale_times_the_tensor_scale():
    w_q = int8s((16, 3), np.uint8)
    scale = RNG.integers(0x28, 0x48, (2, 3)).astype(np.uint8)
    block_scale = np.repeat(scale.view(ml_dtypes.float8_e4m3fn).astype(np.float32), 16, 0)
    weights = fp4_codes(w_q) * block_scale * np.float32(0.75)
    check_dequant("nvfp4_block", w_q, scale, np.float32([0.75]), weights)


def test_dequant_matmul_keeps_half_precision_x():
    w_q, scale = int8s((32, 5), np.int8), RNG.random((4, 5)).astype(np.float32)
    x = XQ.astype(ml_dtypes.bfloat16)
    y = run_op("dequant_matmul", [x, w_q, scale, np.zeros(1, np.float32)], scheme="int8_block", block_size=8)
    assert y.dtype == ml_dtypes.bfloat16
    expected = x.astype(np.float32) @ (w_q * np.repeat(scale, 8, 0))
    np.testing.assert_allclose(y.astype(np.float32), expected, rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize(("fmt", "dtype", "count"), [
    ("e4m3fn", ml_dtypes.float8_e4m3fn, 256), ("e5m2", ml_dtypes.float8_e5m2, 256),
    ("e2m1", ml_dtypes.float4_e2m1fn, 16),
])  # fmt: skip
def test_format_tables_are_ml_dtypes_bit_patterns(fmt, dtype, count):
    expected = np.arange(count, dtype=np.uint8).view(dtype).astype(np.float32)
    np.testing.assert_array_equal(quantformats.table(fmt), expected)  # NaN matches NaN, signs of zeros too
    assert np.array_equal(np.signbit(quantformats.table(fmt)), np.signbit(expected))
