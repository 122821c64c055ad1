"""mir.conv and mir.pool against independent oracles (loop formulas and ONNX)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, f32
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(5)
TOL = {"rtol": 1e-5, "atol": 1e-5}
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-conv.mlir"


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def out_size(size, kernel, stride, pad, dilation=1):
    return (size + 2 * pad - dilation * (kernel - 1) - 1) // stride + 1


def reference_conv(x, w, stride, padding, dilation, groups):
    """Direct convolution in float64: one output channel and pixel at a time."""
    n, cin, h, wd = x.shape
    cout, per_group, kh, kw = w.shape
    (sh, sw), (ph, pw), (dh, dw) = stride, padding, dilation
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    ho, wo = out_size(h, kh, sh, ph, dh), out_size(wd, kw, sw, pw, dw)
    out = np.zeros((n, cout, ho, wo))
    for o in range(cout):
        g = o // (cout // groups)
        channels = slice(g * per_group, (g + 1) * per_group)
        for i in range(ho):
            for j in range(wo):
                rows = slice(i * sh, i * sh + dh * (kh - 1) + 1, dh)
                cols = slice(j * sw, j * sw + dw * (kw - 1) + 1, dw)
                out[:, o, i, j] = (padded[:, channels, rows, cols] * w[o]).sum(axis=(1, 2, 3))
    return out


def reference_pool(x, kind, kernel, stride, padding):
    """Pooling over the real cells of each window (padding never counts)."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw) = kernel, stride, padding
    ho, wo = out_size(h, kh, sh, ph), out_size(w, kw, sw, pw)
    out = np.zeros((n, c, ho, wo), np.float64)
    for i in range(ho):
        for j in range(wo):
            r0, c0 = i * sh - ph, j * sw - pw
            cells = x[:, :, max(r0, 0) : min(r0 + kh, h), max(c0, 0) : min(c0 + kw, w)]
            reduce = np.max if kind == "max" else np.mean
            out[:, :, i, j] = reduce(cells.astype(np.float64), axis=(2, 3))
    return out


CONV_CASES = {
    "plain": dict(x=(2, 3, 7, 6), w=(4, 3, 3, 3)),
    "stride_pad": dict(x=(1, 2, 8, 7), w=(3, 2, 3, 2), stride=(2, 3), padding=(1, 2)),
    "dilated": dict(x=(2, 2, 9, 9), w=(2, 2, 3, 2), dilation=(2, 3), padding=(2, 0)),
    "grouped": dict(x=(2, 4, 6, 6), w=(6, 2, 3, 3), groups=2, stride=(2, 1), padding=(1, 1)),
    "depthwise": dict(x=(1, 3, 5, 5), w=(3, 1, 1, 4), groups=3, padding=(0, 1)),
}


@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_conv_matches_onnx_and_formula(case):
    spec = dict(CONV_CASES[case])
    x, w = randn(*spec.pop("x")), randn(*spec.pop("w"))
    stride, padding = spec.get("stride", (1, 1)), spec.get("padding", (0, 0))
    dilation, groups = spec.get("dilation", (1, 1)), spec.get("groups", 1)
    out = run_op(
        "conv", [x, w], kernel_size=w.shape[2:], stride=stride, padding=padding,
        dilation=dilation, groups=groups,
    )  # fmt: skip
    expected = onnx_run(
        "Conv", [x, w], kernel_shape=list(w.shape[2:]), strides=list(stride),
        pads=[*padding, *padding], dilations=list(dilation), group=groups,
    )  # fmt: skip
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_conv(x, w, stride, padding, dilation, groups), **TOL)


@pytest.mark.parametrize(("dtype", "tol"), [(ml_dtypes.bfloat16, 5e-2), (np.float16, 5e-3), (np.float64, 1e-12)])
def test_conv_computes_in_operand_dtype(dtype, tol):
    x, w = randn(1, 2, 5, 5).astype(dtype), randn(3, 2, 2, 2).astype(dtype)
    out = run_op("conv", [x, w], kernel_size=[2, 2], padding=[1, 1])
    assert out.dtype == dtype
    expected = reference_conv(x, w, (1, 1), (1, 1), (1, 1), 1)
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tol, atol=tol)


POOL_CASES = {
    "no_padding": dict(kernel=(2, 2), stride=(2, 2), padding=(0, 0)),
    "overlapping": dict(kernel=(3, 2), stride=(1, 2), padding=(0, 0)),
    "padded": dict(kernel=(3, 3), stride=(2, 2), padding=(1, 1)),
    "asymmetric": dict(kernel=(2, 3), stride=(3, 1), padding=(1, 2)),
}


@pytest.mark.parametrize("case", sorted(POOL_CASES))
@pytest.mark.parametrize(("kind", "onnx_op", "onnx_extra"), [
    ("max", "MaxPool", {}),
    ("mean", "AveragePool", {"count_include_pad": 0}),
])  # fmt: skip
def test_pool_matches_onnx_and_formula(case, kind, onnx_op, onnx_extra):
    spec = POOL_CASES[case]
    x = randn(2, 3, 7, 8) - 3.0  # mostly negative: a max that counted padding would return 0
    out = run_op("pool", [x], kind=kind, kernel_size=spec["kernel"], stride=spec["stride"], padding=spec["padding"])
    expected = onnx_run(
        onnx_op, [x], kernel_shape=list(spec["kernel"]), strides=list(spec["stride"]),
        pads=[*spec["padding"], *spec["padding"]], **onnx_extra,
    )  # fmt: skip
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_pool(x, kind, spec["kernel"], spec["stride"], spec["padding"]), **TOL)


def test_mean_pool_excludes_padding_from_the_count():
    x = np.ones((1, 1, 2, 2), np.float32)
    out = run_op("pool", [x], kind="mean", kernel_size=[2, 2], stride=[1, 1], padding=[1, 1])
    np.testing.assert_array_equal(out, np.ones((1, 1, 3, 3)))


def test_pool_stride_defaults_to_kernel_size():
    x = randn(1, 2, 6, 6)
    out = run_op("pool", [x], kind="max", kernel_size=[3, 2])
    np.testing.assert_allclose(out, reference_pool(x, "max", (3, 2), (3, 2), (0, 0)), **TOL)
    assert out.shape == (1, 2, 2, 3)


def test_integer_max_pool_ignores_padding():
    x = -np.arange(1, 17, dtype=np.int32).reshape(1, 1, 4, 4)
    out = run_op("pool", [x], kind="max", kernel_size=[2, 2], stride=[2, 2], padding=[1, 1])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, reference_pool(x, "max", (2, 2), (2, 2), (1, 1)))
    assert out[0, 0, 0, 0] == -1


def test_pool_bf16_stays_bf16():
    x = randn(1, 2, 4, 4).astype(ml_dtypes.bfloat16)
    out = run_op("pool", [x], kind="mean", kernel_size=[2, 2], padding=[1, 1])
    assert out.dtype == ml_dtypes.bfloat16
    expected = reference_pool(x, "mean", (2, 2), (2, 2), (1, 1))
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=2e-2, atol=2e-2)


# Definitions ------------------------------------------------------------------


def test_dynamic_dims_and_traits():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC_INDEX, 4, 9, DYNAMIC_INDEX])
    w = b.param("w", [6, 2, 3, 3])
    y = b.conv(x, w, kernel_size=[3, 3], stride=[2, 2], padding=[1, 1], groups=2)
    assert y.type == TensorType(f32, [DYNAMIC_INDEX, 6, 5, DYNAMIC_INDEX])
    assert precision_class(y.owner) == Precision.COMPUTE
    p = b.pool(y, kind="mean", kernel_size=[2, 2])
    assert p.type == TensorType(f32, [DYNAMIC_INDEX, 6, 2, DYNAMIC_INDEX])
    assert precision_class(p.owner) == Precision.DATA_MOVEMENT
    assert p.owner.pair("stride") == (2, 2)


def test_builder_rejects_sum_pooling():
    b = GraphBuilder("f")
    x = b.input("x", [1, 1, 4, 4])
    with pytest.raises(VerifyException, match="'mir.pool' kind must be max or mean, got sum"):
        b.pool(x, kind="sum", kernel_size=[2, 2])


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
