"""numpy semantics of MIR softmax cross-entropy ops, computed in the logits' dtype."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import loss
from rlx_xdsl.interpreters.common import as_result


def softmax_parts(logits: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`(rowmax, shifted, lse)`: `logsumexp(logits) = rowmax + lse`, all rows kept as `[N, 1]`.

    Subtracting the row maximum first keeps `exp` from overflowing.
    """
    rowmax = logits.max(axis=1, keepdims=True)
    shifted = logits - rowmax
    return rowmax, shifted, np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def cross_entropy(logits: np.ndarray, targets: np.ndarray) -> np.ndarray:
    """`logsumexp(logits[n]) - sum_c targets[n, c] * logits[n, c]` per row.

    Expanding `logits = rowmax + shifted` cancels the large `rowmax` terms
    exactly when the targets sum to one, instead of subtracting two big numbers.
    """
    rowmax, shifted, lse = softmax_parts(logits)
    leftover = 1 - targets.sum(axis=1, keepdims=True)
    return (rowmax * leftover + lse - (targets * shifted).sum(axis=1, keepdims=True))[:, 0]


def one_hot(labels: np.ndarray, num_classes: int, dtype: np.dtype) -> np.ndarray:
    """`[N, C]` one-hot rows; float labels truncate toward zero, out-of-range ones give zeros."""
    if labels.dtype.kind in "iu":
        classes = labels.astype(np.int64)
    else:
        with np.errstate(invalid="ignore"):  # NaN/inf labels select no class
            classes = np.trunc(labels.astype(np.float64)).astype(np.int64)
    return (classes[:, None] == np.arange(num_classes)).astype(dtype)


def run_sce_with_logits(op: loss.SoftmaxCrossEntropyWithLogitsOp, logits, labels) -> tuple[np.ndarray]:
    targets = one_hot(labels, logits.shape[1], logits.dtype)
    return (as_result(op, cross_entropy(logits, targets)),)


def run_sce_dense(op: loss.SoftmaxCrossEntropyOp, logits, targets) -> tuple[np.ndarray]:
    return (as_result(op, cross_entropy(logits, targets)),)


def run_sce_backward(op: loss.SoftmaxCrossEntropyBackwardOp, logits, labels, d_loss) -> tuple[np.ndarray]:
    _, shifted, lse = softmax_parts(logits)
    softmax = np.exp(shifted - lse)
    grad = (softmax - one_hot(labels, logits.shape[1], logits.dtype)) * d_loss[:, None]
    return (as_result(op, grad),)


KERNELS = {
    loss.SoftmaxCrossEntropyWithLogitsOp: run_sce_with_logits,
    loss.SoftmaxCrossEntropyOp: run_sce_dense,
    loss.SoftmaxCrossEntropyBackwardOp: run_sce_backward,
}
