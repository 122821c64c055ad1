"""Quantisation MIR ops against ONNX's reference implementation (QuantizeLinear, DequantizeLinear)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.dialects.mir import quant
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
