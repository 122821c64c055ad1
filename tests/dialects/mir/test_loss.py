"""Softmax cross-entropy ops against ONNX, closed formulas and finite differences."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
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


# Against PyTorch: -inf logits, labels [N, 1], ignore_index ---------------------------

NEG_INF_LOGITS = LOGITS.copy()
NEG_INF_LOGITS[[0, 1, 3, 5], [1, 0, 4, 2]] = -np.inf  # classes the labels do not select


def torch_loss(x: np.ndarray, labels: np.ndarray, reduction="none", **kwargs) -> np.ndarray:
    target = torch.from_numpy(labels.reshape(-1).astype(np.int64))
    return F.cross_entropy(torch.from_numpy(x), target, reduction=reduction, **kwargs).numpy()


def torch_grad(x: np.ndarray, labels: np.ndarray, d: np.ndarray, **kwargs) -> np.ndarray:
    """d/dx of `sum(d * cross_entropy(x, labels, reduction="none"))`, by torch's autograd."""
    logits = torch.from_numpy(x).requires_grad_()
    target = torch.from_numpy(labels.reshape(-1).astype(np.int64))
    per_row = F.cross_entropy(logits, target, reduction="none", **kwargs)
    (per_row * torch.from_numpy(d)).sum().backward()
    return logits.grad.numpy()


def test_neg_inf_logits_of_other_classes_give_torchs_finite_loss():
    out = run_op("softmax_cross_entropy_with_logits", [NEG_INF_LOGITS, LABELS])
    assert np.all(np.isfinite(out))
    np.testing.assert_allclose(out, torch_loss(NEG_INF_LOGITS, LABELS), rtol=1e-5, atol=1e-6)
    d = RNG.standard_normal(6).astype(np.float32)
    grad = run_op("softmax_cross_entropy_backward", [NEG_INF_LOGITS, LABELS, d])
    np.testing.assert_allclose(grad, torch_grad(NEG_INF_LOGITS, LABELS, d), rtol=1e-5, atol=1e-6)


def test_dense_neg_inf_logits_with_zero_targets_stay_finite():
    """Classes whose target is 0 contribute nothing, even at a `-inf` logit."""
    t = np.eye(5, dtype=np.float32)[LABELS] * 0.75
    t[np.arange(6), [2, 3, 0, 0, 3, 1]] = 0.25  # a second class per row, never a -inf one
    assert np.all(np.isfinite(NEG_INF_LOGITS[t != 0]))
    out = run_op("softmax_cross_entropy", [NEG_INF_LOGITS, t])
    x64 = NEG_INF_LOGITS.astype(np.float64)
    expected = logsumexp64(NEG_INF_LOGITS) - np.where(t != 0, t * np.where(t != 0, x64, 0), 0).sum(axis=1)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("label_dtype", [np.int64, np.int32, np.float32])
def test_column_labels_match_torch(label_dtype):
    """Labels `[N, 1]` (RLX reshapes them to `[N]`) give the same losses and gradients."""
    column = LABELS.reshape(6, 1).astype(label_dtype)
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, column])
    np.testing.assert_allclose(out, torch_loss(LOGITS, LABELS), rtol=1e-5, atol=1e-6)
    d = RNG.standard_normal(6).astype(np.float32)
    grad = run_op("softmax_cross_entropy_backward", [LOGITS, column, d])
    np.testing.assert_allclose(grad, torch_grad(LOGITS, LABELS, d), rtol=1e-5, atol=1e-6)


IGNORED_LABELS = np.array([0, -100, 2, -100, 1, 3], np.int64)


@pytest.mark.parametrize(
    ("labels", "ignore_index"),
    [
        (IGNORED_LABELS, -100),
        (LABELS, 2),
        (LABELS.reshape(6, 1), 4),
        (IGNORED_LABELS.astype(np.float32), -100),
    ],
    ids=["negative", "a-class", "column", "float-labels"],
)
def test_ignore_index_matches_torch(labels, ignore_index):
    """Ignored rows: loss 0 and gradient 0, as `F.cross_entropy(..., ignore_index=K)`."""
    ids = labels.reshape(-1).astype(np.int64)
    assert (ids == ignore_index).any() and (ids != ignore_index).any()
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, labels], ignore_index=ignore_index)
    np.testing.assert_allclose(out, torch_loss(LOGITS, ids, ignore_index=ignore_index), rtol=1e-5, atol=1e-6)
    d = RNG.standard_normal(6).astype(np.float32)
    grad = run_op("softmax_cross_entropy_backward", [LOGITS, labels, d], ignore_index=ignore_index)
    expected = torch_grad(LOGITS, ids, d, ignore_index=ignore_index)
    np.testing.assert_allclose(grad, expected, rtol=1e-5, atol=1e-6)
    assert np.all(grad[ids == ignore_index] == 0)


def test_ignore_index_mean_divides_by_the_rows_not_ignored():
    """The documented mean: `sum(loss) / count(labels != ignore_index)` is torch's "mean"."""
    out = run_op("softmax_cross_entropy_with_logits", [LOGITS, IGNORED_LABELS], ignore_index=-100)
    mean = out.sum() / np.count_nonzero(IGNORED_LABELS != -100)
    expected = torch_loss(LOGITS, IGNORED_LABELS, reduction="mean", ignore_index=-100)
    np.testing.assert_allclose(mean, expected, rtol=1e-6)


def test_ignored_rows_get_zero_whatever_their_logits_and_d_loss():
    x = LOGITS.copy()
    x[1] = np.nan
    d = np.full(6, np.inf, np.float32)
    out = run_op("softmax_cross_entropy_with_logits", [x, IGNORED_LABELS], ignore_index=-100)
    grad = run_op("softmax_cross_entropy_backward", [x, IGNORED_LABELS, d], ignore_index=-100)
    assert out[1] == 0 and out[3] == 0 and np.all(grad[[1, 3]] == 0)


# Types, traits and verifier ---------------------------------------------------------


def test_result_types_are_inferred_with_dynamic_batch():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 7])
    labels = b.input("labels", [3], "i32")
    d = b.input("d", [DYNAMIC])
    assert str(b.softmax_cross_entropy_with_logits(x, labels).type) == "tensor<3xf32>"
    assert str(b.softmax_cross_entropy(x, x).type) == "tensor<?xf32>"
    assert str(b.softmax_cross_entropy_backward(x, labels, d).type) == "tensor<3x7xf32>"
    column = b.input("column", [DYNAMIC, 1], "i64")
    assert str(b.softmax_cross_entropy_with_logits(x, column).type) == "tensor<?xf32>"
    assert str(b.softmax_cross_entropy_backward(x, column, d, ignore_index=0).type) == "tensor<?x7xf32>"


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
