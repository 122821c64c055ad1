"""numpy semantics of MIR softmax cross-entropy ops.

Computed in the accumulation dtype (f32 for f16/bf16 logits, else the logits'
dtype) and rounded once to the result dtype. A loss is finite whenever its row's
largest logit is finite and the selected logits are finite: other classes' `-inf`
logits contribute nothing (no `0 · -inf` products). A row holding NaN or `+inf`, or
only `-inf`, gives NaN. Labels may be `[N]` or `[N, 1]`; a row whose label equals the
op's `ignore_index` gives loss 0 and gradient 0.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import loss
from rlx_xdsl.interpreters.common import as_result
from rlx_xdsl.numerics import accumulate_sum, widened


def softmax_parts(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(rowmax, shifted, lse)`: `logsumexp(logits) = rowmax + lse`, all rows kept as `[N, 1]`.

    Subtracting the row maximum first keeps `exp` from overflowing.
    """
    rowmax = logits.max(axis=1, keepdims=True)
    shifted = logits - rowmax
    return rowmax, shifted, np.log(accumulate_sum(np.exp(shifted), axis=1, keepdims=True))


def label_ids(labels: np.ndarray) -> np.ndarray:
    """`[N]` labels as numbers comparable with class ids: integers widened to i64, float
    labels truncated toward zero (in f64, so NaN stays NaN); `[N, 1]` labels flattened."""
    labels = labels.reshape(labels.shape[0])
    if labels.dtype.kind in "iub":
        return labels.astype(np.int64)
    return np.trunc(widened(labels).astype(np.float64))


def label_classes(labels: np.ndarray, num_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """`(classes, valid)` per row: float labels truncate toward zero; a label outside
    `[0, C)` (or NaN) is not valid and selects no class."""
    ids = label_ids(labels)
    valid = (ids >= 0) & (ids < num_classes)  # NaN fails both
    return np.where(valid, ids, 0).astype(np.int64), valid


def ignored_rows(op: loss.IndexedCrossEntropyOperation, labels: np.ndarray) -> np.ndarray:
    """`[N, 1]` booleans: the rows whose label is the op's `ignore_index` (none without one)."""
    ignore = op.ignored_label()
    if ignore is None:
        return np.zeros((labels.shape[0], 1), bool)
    return (label_ids(labels) == ignore)[:, None]


def one_hot(labels: np.ndarray, num_classes: int, dtype: np.dtype) -> np.ndarray:
    """`[N, C]` one-hot rows; rows whose label selects no class are zeros."""
    classes, valid = label_classes(labels, num_classes)
    return ((classes[:, None] == np.arange(num_classes)) & valid[:, None]).astype(dtype)


def run_sce_with_logits(op: loss.SoftmaxCrossEntropyWithLogitsOp, logits, labels) -> tuple[np.ndarray]:
    # lse(logits) - logits[label] = (rowmax + lse) - (rowmax + shifted[label]); an invalid
    # label selects nothing, so its loss is the whole logsumexp.
    rowmax, shifted, lse = softmax_parts(widened(logits))
    classes, valid = label_classes(labels, logits.shape[1])
    picked = np.take_along_axis(shifted, classes[:, None], axis=1)
    per_row = np.where(valid[:, None], lse - picked, rowmax + lse)
    return (as_result(op, np.where(ignored_rows(op, labels), 0, per_row)[:, 0]),)


def run_sce_dense(op: loss.SoftmaxCrossEntropyOp, logits, targets) -> tuple[np.ndarray]:
    """`lse − Σ t·logits`, exactly also for targets that do not sum to 1; classes whose
    target is 0 contribute nothing, even where their logit is `-inf`."""
    rowmax, shifted, lse = softmax_parts(widened(logits))
    t = widened(targets)
    weighted = accumulate_sum(np.where(t != 0, t * shifted, 0), axis=1, keepdims=True)
    # Σ t·logits = rowmax·Σt + Σ t·shifted; writing lse − rowmax·Σt as below cancels the
    # large rowmax terms exactly when the targets sum to one.
    leftover = 1 - accumulate_sum(t, axis=1, keepdims=True)
    return (as_result(op, (np.where(leftover != 0, rowmax * leftover, 0) + lse - weighted)[:, 0]),)


def run_sce_backward(op: loss.SoftmaxCrossEntropyBackwardOp, logits, labels, d_loss) -> tuple[np.ndarray]:
    _, shifted, lse = softmax_parts(widened(logits))
    softmax = np.exp(shifted - lse)
    grad = (softmax - one_hot(labels, logits.shape[1], softmax.dtype)) * widened(d_loss)[:, None]
    return (as_result(op, np.where(ignored_rows(op, labels), 0, grad)),)


KERNELS = {
    loss.SoftmaxCrossEntropyWithLogitsOp: run_sce_with_logits,
    loss.SoftmaxCrossEntropyOp: run_sce_dense,
    loss.SoftmaxCrossEntropyBackwardOp: run_sce_backward,
}
