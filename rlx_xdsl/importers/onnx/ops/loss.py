"""NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opsets 13+), built from gathers.

`loss[n, d...] = -input[n, target[n, d...], d...] * weight[target[n, d...]]`, 0 where the
target is `ignore_index`; `reduction` "none", "sum" or "mean" (the sum over the sum of the
weights picked, so ignored elements count for nothing), as ONNX's reference.
"""

from __future__ import annotations

from rlx_xdsl.importers.onnx.ops.gather import take_along_axis
from rlx_xdsl.importers.onnx.ops.softmax import log_softmax_along
from rlx_xdsl.importers.onnx.table import rule


def _nll(t, log_prob, target, weight_index: int):
    """The loss of `log_prob[N, C, d...]` at `target[N, d...]`, `weight` the node's input
    `weight_index` when given."""
    e = t.e.mir
    dtype = t.dtype(log_prob)
    target = e.cast(target, "i64") if t.dtype(target) != "i64" else target
    ignore = t.attr("ignore_index")
    keep = None
    if ignore is not None:  # ignored targets read class 0 and weigh nothing
        keep = e.compare(target, t.constant(ignore, "i64"), "ne")
        target = e.where(keep, target, t.constant(0, "i64"))
    picked = take_along_axis(t, log_prob, e.reshape(target, new_shape=_with_class_axis(t, target)), 1)
    picked = e.reshape(picked, new_shape=t.shape(target))
    if t.input(weight_index) is not None:
        weights = e.gather(t.value(weight_index), target, axis=0)
    else:
        weights = e.expand(t.constant(1, dtype), target_shape=t.shape(target))
    if keep is not None:
        weights = e.where(keep, weights, t.constant(0, dtype))
    loss = e.neg(e.mul(picked, weights))
    reduction = t.attr("reduction", b"mean")
    reduction = reduction.decode() if isinstance(reduction, bytes) else reduction
    if reduction == "none":
        return loss
    axes = list(range(t.rank(loss)))
    total = e.reduce(loss, kind="sum", axes=axes, keep_dim=False)
    if reduction == "sum":
        return total
    if reduction == "mean":
        return e.div(total, e.reduce(weights, kind="sum", axes=axes, keep_dim=False))
    raise t.fail(f"reduction '{reduction}' is not one of none, sum, mean")


def _with_class_axis(t, target) -> list[int]:
    shape = t.shape(target)
    return [shape[0], 1, *shape[1:]]


@rule("NegativeLogLikelihoodLoss")
def negative_log_likelihood_loss(t, node):
    return _nll(t, t.value(0), t.value(1), 2)


@rule("SoftmaxCrossEntropyLoss")
def softmax_cross_entropy_loss(t, node):
    """The NLL loss of `log_softmax(scores, axis=1)`; the second output is that log-softmax."""
    log_prob = log_softmax_along(t, t.value(0), 1)
    return [_nll(t, log_prob, t.value(1), 2), log_prob]
