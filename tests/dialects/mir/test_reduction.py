"""Reduction and scan MIR ops against independent oracles (numpy formulas and ONNX)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import reduction as red
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(11)
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-reduction.mlir"

# --- mir.reduce ----------------------------------------------------------------

ONNX_REDUCE = {"sum": "ReduceSum", "mean": "ReduceMean", "max": "ReduceMax", "min": "ReduceMin",
               "prod": "ReduceProd"}
NUMPY_REDUCE = {"sum": np.sum, "mean": np.mean, "max": np.max, "min": np.min, "prod": np.prod}


@pytest.mark.parametrize("kind", sorted(ONNX_REDUCE))
@pytest.mark.parametrize(
    ("axes", "keep_dim"), [([1], False), ([0, 2], True), ([-1, 0], False), ([0, 1, 2], False)]
)
def test_reduce_matches_onnx_and_numpy(kind, axes, keep_dim):
    out = run_op("reduce", [X], kind=kind, axes=axes, keep_dim=keep_dim)
    onnx = onnx_run(ONNX_REDUCE[kind], [X, np.array(axes, np.int64)], keepdims=int(keep_dim))
    formula = NUMPY_REDUCE[kind](X.astype(np.float64), axis=tuple(axes), keepdims=keep_dim)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, onnx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, formula, rtol=1e-5, atol=1e-6)


def test_reduce_shapes():
    assert run_op("reduce", [X], kind="sum", axes=[1]).shape == (2, 4)
    assert run_op("reduce", [X], kind="sum", axes=[-3, 2], keep_dim=True).shape == (1, 3, 1)
    assert run_op("reduce", [X], kind="max", axes=[0, 1, 2]).shape == ()


def test_integer_mean_truncates_toward_zero():
    x = np.array([[-3, -4], [5, 2], [7, 7]], np.int32)
    out = run_op("reduce", [x], kind="mean", axes=[1])
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [-3, 3, 7])  # -3.5 -> -3 and 3.5 -> 3, like Rust


def test_integer_sum_stays_in_dtype():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    out = run_op("reduce", [x], kind="sum", axes=[0])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [5, 7, 9])


def test_f16_sum_accumulates_in_f32():
    # 100 * 1000 = 1e5 overflows f16 (max 65504) if accumulated in f16; the mean fits.
    x = np.full((100,), 1000.0, np.float16)
    out = run_op("reduce", [x], kind="mean", axes=[0])
    assert out.dtype == np.float16
    assert out == np.float16(1000.0)


def test_bf16_sum_accumulates_in_f32():
    # bf16 keeps 8 significant bits: adding 1 to 256 in bf16 is lost, in f32 it is not.
    x = np.array([256.0] + [1.0] * 64, ml_dtypes.bfloat16)
    out = run_op("reduce", [x], kind="sum", axes=[0])
    assert out.dtype == ml_dtypes.bfloat16
    assert float(out) == 320.0


# --- mir.softmax ---------------------------------------------------------------


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_softmax_matches_onnx_and_formula(axis):
    out = run_op("softmax", [X], axis=axis)
    e = np.exp(X.astype(np.float64))
    formula = e / e.sum(axis=axis, keepdims=True)
    np.testing.assert_allclose(out, onnx_run("Softmax", [X], axis=axis), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(out, formula, rtol=1e-5, atol=1e-7)


def test_softmax_is_numerically_stable():
    # exp(1000) overflows; softmax is shift invariant so the answer equals softmax(X).
    out = run_op("softmax", [X + np.float32(1000.0)])
    e = np.exp(X.astype(np.float64))
    assert np.isfinite(out).all()
    np.testing.assert_allclose(out, e / e.sum(axis=-1, keepdims=True), rtol=1e-4)


def test_softmax_bf16_keeps_dtype():
    x = X.astype(ml_dtypes.bfloat16)
    out = run_op("softmax", [x])
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(out.astype(np.float32).sum(axis=-1), 1.0, atol=2e-2)


# --- mir.cumsum ----------------------------------------------------------------


def running_sum(x: np.ndarray, axis: int, exclusive: bool) -> np.ndarray:
    """An explicit loop over the scanned axis."""
    moved = np.moveaxis(x.astype(np.float64), axis, 0)
    out = np.zeros_like(moved)
    total = np.zeros_like(moved[0])
    for i in range(moved.shape[0]):
        if exclusive:
            out[i] = total
        total = total + moved[i]
        if not exclusive:
            out[i] = total
    return np.moveaxis(out, 0, axis)


@pytest.mark.parametrize("axis", [0, 1, -1])
@pytest.mark.parametrize("exclusive", [False, True])
def test_cumsum_matches_onnx_and_loop(axis, exclusive):
    out = run_op("cumsum", [X], axis=axis, exclusive=exclusive)
    onnx = onnx_run("CumSum", [X, np.array(axis, np.int64)], exclusive=int(exclusive))
    np.testing.assert_allclose(out, onnx, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out, running_sum(X, axis, exclusive), rtol=1e-5, atol=1e-6)


def test_cumsum_integers():
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    np.testing.assert_array_equal(run_op("cumsum", [x], axis=1), [[1, 3, 6], [4, 9, 15]])
    exclusive = run_op("cumsum", [x], axis=1, exclusive=True)
    np.testing.assert_array_equal(exclusive, [[0, 1, 3], [0, 4, 9]])


# --- mir.topk ------------------------------------------------------------------


@pytest.mark.parametrize("k", [1, 3, 4])
def test_topk_matches_onnx(k):
    values, indices = run_op("topk", [X], k=k)
    onnx_values, onnx_indices = onnx_run("TopK", [X, np.array([k], np.int64)], n_outputs=2)
    assert values.dtype == np.float32 and indices.dtype == np.int64
    np.testing.assert_array_equal(values, onnx_values)
    np.testing.assert_array_equal(indices, onnx_indices)


def test_topk_formula_and_ties_prefer_lower_index():
    x = np.array([[1, 3, 3, 2, 3], [5, 5, 5, 5, 5]], np.float32)
    values, indices = run_op("topk", [x], k=3)
    np.testing.assert_array_equal(indices, [[1, 2, 4], [0, 1, 2]])
    np.testing.assert_array_equal(values, [[3, 3, 3], [5, 5, 5]])
    onnx_values, onnx_indices = onnx_run("TopK", [x, np.array([3], np.int64)], n_outputs=2)
    np.testing.assert_array_equal(indices, onnx_indices)


@pytest.mark.parametrize("dtype", [np.uint8, np.int32, ml_dtypes.bfloat16])
def test_topk_other_dtypes(dtype):
    x = np.array([[0, 200, 7, 200, 9]], dtype)
    values, indices = run_op("topk", [x], k=2)
    assert values.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(indices, [[1, 3]])
    np.testing.assert_array_equal(values.astype(np.float32), [[200, 200]])


# --- Verification ----------------------------------------------------------------


def test_traits():
    for op in (red.ReduceOp, red.SoftmaxOp, red.CumsumOp):
        assert precision_class(op) is Precision.REDUCTION
    assert precision_class(red.TopkOp) is Precision.DATA_MOVEMENT
    assert all(op.has_trait(Pure) for op in red.OPS)


def test_builder_infers_types_including_topk_pair():
    b = GraphBuilder("f")
    x = b.input("x", [2, 8])
    assert str(b.reduce(x, kind="max", axes=[1], keep_dim=True).type) == "tensor<2x1xf32>"
    values, indices = b.topk(x, k=3)
    assert str(values.type) == "tensor<2x3xf32>"
    assert str(indices.type) == "tensor<2x3xi64>"


@pytest.mark.parametrize(
    ("op", "operands", "attributes", "message"),
    [
        ("reduce", [[2, 3]], {"axes": []}, "'mir.reduce' axes must not be empty"),
        ("reduce", [[2, 3]], {"axes": [0, -2]}, r"'mir.reduce' axes \[0, -2\] name the same axis"),
        ("softmax", [[2, 3]], {"axis": 2}, "'mir.softmax' axis 2 is out of range for rank 2"),
        ("cumsum", [[2, 3]], {"axis": -3}, "'mir.cumsum' axis -3 is out of range for rank 2"),
        ("topk", [[2, 3]], {"k": 4}, "'mir.topk' k = 4 exceeds the last dim 3"),
        ("topk", [[2, 3]], {"k": -1}, "'mir.topk' k must be at least 1, got -1"),
    ],
)
def test_builder_rejects_bad_attributes(op, operands, attributes, message):
    with pytest.raises(VerifyException, match=message):
        build_op(op, operands, **attributes)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
