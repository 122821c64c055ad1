"""Softmax cross-entropy ops against ONNX, closed formulas and finite differences."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.dialects.mir import loss
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(11)
LOGITS = (RNG.standard_normal((6, 5)) * 3).astype(np.float32)
LABELS = np.array([0, 4, 2, 2, 1, 3], np.int64)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-loss.mlir"


# Independent oracles, written from the definitions in float64 ------------------


def logsumexp64(x: np.ndarray) -> np.ndarray:
    x = x.astype(np.float64)
    m = x.max(axis=1)
    return m + np.log(np.exp(x - m[:, None]).sum(axis=1))


def dense_loss64(x: np.ndarray, t: np.ndarray) -> np.ndarray:
    return logsumexp64(x) - (t.astype(np.float64) * x.astype(np.float64)).sum(axis=1)


def indexed_grad64(x: np.ndarray, labels: np.ndarray, d: np.ndarray) -> np.ndarray:
    e = np.exp(x.astype(np.float64) - logsumexp64(x)[:, None])
    for n, c in enumerate(labels):
        e[n, int(c)] -= 1.0
    return e * d.astype(np.float64)[:, None]


# Forward, indexed ---------------------------------------------------------------


@pytest.mark.parametrize("label_dtype", [np.float32, np.int64, np.int32, np.uint8])
def test_indexed_matches_onnx(label_dtype):
    expected = onnx_run("SoftmaxCrossEntropyLoss", [LOGITS, LABELS], reduction="none")
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, LABELS.astype(label_dtype)])
    assert out.dtype == np.float32 and out.shape == (6,)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_indexed_matches_formula_for_large_logits():
    """Max subtraction: logits near 1e4 would overflow a naive exp in f32."""
    x = (LOGITS + np.float32(1e4)).astype(np.float32)
    x[0, 0] = 2e4
    out = run_op("softmax_cross_entropy_with_logits", [x, LABELS.astype(np.float32)])
    picked = x.astype(np.float64)[np.arange(6), LABELS]
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, logsumexp64(x) - picked, rtol=1e-5, atol=1e-2)
    assert out[0] == 0.0  # the dominant logit is the label: the loss vanishes


def test_float_labels_truncate_toward_zero():
    float_labels = np.array([0.9, 4.99, 2.5, 2.0, 1.2, 3.7], np.float32)
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, float_labels])
    expected = logsumexp64(LOGITS) - LOGITS.astype(np.float64)[np.arange(6), [0, 4, 2, 2, 1, 3]]
    np.testing.assert_allclose(out, expected, rtol=1e-5)


def test_out_of_range_label_selects_no_class():
    labels = np.array([-1, 5, 7, 0, 1, 2], np.int64)
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, labels])
    lse = logsumexp64(LOGITS)
    np.testing.assert_allclose(out[:3], lse[:3], rtol=1e-5)  # loss = bare logsumexp
    np.testing.assert_allclose(out[3:], lse[3:] - LOGITS[[3, 4, 5], [0, 1, 2]], rtol=1e-5)


@pytest.mark.parametrize(
    ("dtype", "rtol"), [(np.float16, 5e-3), (ml_dtypes.bfloat16, 3e-2), (np.float64, 1e-12)]
)
def test_indexed_computes_in_logits_dtype(dtype, rtol):
    x = LOGITS.astype(dtype)
    out = run_op("softmax_cross_entropy_with_logits", [x, LABELS])
    assert out.dtype == np.dtype(dtype)
    expected = logsumexp64(x) - x.astype(np.float64)[np.arange(6), LABELS]
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=rtol, atol=rtol)


# Forward, dense -----------------------------------------------------------------


def test_dense_matches_formula():
    t = RNG.random((6, 5)).astype(np.float32)
    t /= t.sum(axis=1, keepdims=True)
    out = run_op("softmax_cross_entropy", [LOGITS, t])
    np.testing.assert_allclose(out, dense_loss64(LOGITS, t), rtol=1e-5, atol=1e-6)


def test_dense_unnormalised_targets_follow_the_definition():
    """`lse - sum(t * logits)` exactly, also when a target row does not sum to one."""
    t = (RNG.random((6, 5)) * 2).astype(np.float32)
    x = (LOGITS + np.float32(50)).astype(np.float32)
    out = run_op("softmax_cross_entropy", [x, t])
    np.testing.assert_allclose(out, dense_loss64(x, t), rtol=1e-5, atol=1e-3)


def test_dense_with_one_hot_targets_matches_onnx_indexed_loss():
    one_hot = np.eye(5, dtype=np.float32)[LABELS]
    expected = onnx_run("SoftmaxCrossEntropyLoss", [LOGITS, LABELS], reduction="none")
    out = run_op("softmax_cross_entropy", [LOGITS, one_hot])
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


def test_dense_f16_keeps_dtype():
    t = np.full((6, 5), 0.2, np.float16)
    out = run_op("softmax_cross_entropy", [LOGITS.astype(np.float16), t])
    assert out.dtype == np.float16
    np.testing.assert_allclose(out, dense_loss64(LOGITS.astype(np.float16), t), rtol=5e-3)


# Backward -------------------------------------------------------------------------


def test_backward_matches_closed_formula():
    d = RNG.standard_normal(6).astype(np.float32)
    out = run_op("softmax_cross_entropy_backward", [LOGITS, LABELS.astype(np.float32), d])
    assert out.shape == (6, 5) and out.dtype == np.float32
    np.testing.assert_allclose(out, indexed_grad64(LOGITS, LABELS, d), rtol=1e-5, atol=1e-6)


def test_backward_is_the_derivative_of_the_forward_loss():
    """Central differences of `sum(d * loss(logits))` through the forward op, in f64."""
    x = LOGITS.astype(np.float64)
    labels = LABELS.astype(np.float32)
    d = RNG.standard_normal(6)
    grad = run_op("softmax_cross_entropy_backward", [x, labels, d])
    h = 1e-6
    numeric = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        step = np.zeros_like(x)
        step[idx] = h
        up = run_op("softmax_cross_entropy_with_logits", [x + step, labels])
        down = run_op("softmax_cross_entropy_with_logits", [x - step, labels])
        numeric[idx] = np.dot(d, up - down) / (2 * h)
    np.testing.assert_allclose(grad, numeric, rtol=1e-6, atol=1e-8)


def test_backward_rows_sum_to_zero_for_in_range_labels():
    out = run_op("softmax_cross_entropy_backward", [LOGITS, LABELS, np.ones(6, np.float32)])
    np.testing.assert_allclose(out.sum(axis=1), 0.0, atol=1e-6)


# Types, traits and verifier ---------------------------------------------------------


def test_result_types_are_inferred_with_dynamic_batch():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 7])
    labels = b.input("labels", [3], "i32")
    d = b.input("d", [DYNAMIC])
    assert str(b.softmax_cross_entropy_with_logits(x, labels).type) == "tensor<3xf32>"
    assert str(b.softmax_cross_entropy(x, x).type) == "tensor<?xf32>"
    assert str(b.softmax_cross_entropy_backward(x, labels, d).type) == "tensor<3x7xf32>"


@pytest.mark.parametrize("op", loss.OPS)
def test_ops_are_pure_reductions(op):
    assert op.has_trait(Pure)
    assert precision_class(op) is Precision.REDUCTION


def test_builder_rejects_mismatched_rows():
    b = GraphBuilder("f")
    x = b.input("x", [4, 3])
    labels = b.input("labels", [5])
    message = r"'mir.softmax_cross_entropy_with_logits' labels has 5 rows but logits has 4"
    with pytest.raises(VerifyException, match=message):
        b.softmax_cross_entropy_with_logits(x, labels)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
