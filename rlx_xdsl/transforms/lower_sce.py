"""`rlx-lower-softmax-cross-entropy`: the three SCE ops as primitive MIR, for backends
without a native kernel (upstream RLX's `LowerSoftmaxCrossEntropy`).

Both losses share one chain, the interpreter's formula with the row maximum `m`
subtracted first:

    loss[n] = log(sum_c exp(x - m)) - sum_c t * (x - m) + m * (1 - sum_c t)

where `t` is the dense targets, or the one-hot rows of the labels. The last term
vanishes when a target row sums to one; it keeps the definition
`logsumexp(x) - sum_c t * x` exact for any other targets (an out-of-range label's
all-zero row gives the bare logsumexp). The backward is
`(softmax(x) - one_hot(labels)) * d_loss[:, None]`.

Upstream builds the one-hot from one `where` per class and a concat: C ops, so a
50k vocabulary becomes 50k ops. Here it is one comparison of the labels (as
integers, float labels truncated toward zero like the kernel) with a `mir.iota`
ramp of the C class ids, so the lowered graph's size does not depend on C. The
ramp needs C static; a dynamic class count is reported at the op.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl import dtypes
from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.loss import (
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape
from rlx_xdsl.transforms.rewriting import apply_patterns


def one_hot(e: Emitter, op: Operation, logits: SSAValue, labels: SSAValue) -> SSAValue:
    """`[N, C]` rows in the logits' dtype: 1 where `labels[n] == c`, else 0.

    Float labels are cast to i64 first, which truncates toward zero as the kernel does.
    """
    logits_type = tensor_type(logits)
    classes = logits_type.get_shape()[1]
    if classes == DYNAMIC:
        raise OpError(
            op,
            f"'{op.name}' cannot be lowered: logits {fmt_shape(logits_type.get_shape())} have a "
            "dynamic class count, and the one-hot's mir.iota ramp needs it static",
        )
    ids = labels
    if dtypes.is_float(tensor_type(labels).element_type):
        ids = e.mir.cast(labels, i64)
    column = e.mir.reshape(ids, new_shape=[-1, 1])
    ramp = e.mir.iota([1, classes], i64, dimension=1)
    return e.mir.cast(e.mir.compare(column, ramp, "eq"), logits_type.element_type)


def rows_of(e: Emitter, value: SSAValue, result_type: TensorType) -> SSAValue:
    """`value` reshaped to `result_type`'s shape (one `?` becomes -1), when it differs.

    A dim that is `?` in the logits may be static in the op's result (the labels
    know it); the replacement must have the result's exact type.
    """
    if value.type == result_type:
        return value
    shape = [-1 if d == DYNAMIC else d for d in result_type.get_shape()]
    return e.mir.reshape(value, new_shape=shape)


def cross_entropy(e: Emitter, logits: SSAValue, targets: SSAValue, result_type: TensorType) -> SSAValue:
    """`logsumexp(logits[n]) - sum_c targets[n, c] * logits[n, c]`, computed with the max subtracted."""
    et = tensor_type(logits).element_type
    rowmax = e.mir.reduce(logits, kind="max", axes=[1], keep_dim=True)
    shifted = e.mir.sub(logits, rowmax)
    sum_exp = e.mir.reduce(e.mir.exp(shifted), kind="sum", axes=[1], keep_dim=True)
    picked = e.mir.reduce(e.mir.mul(targets, shifted), kind="sum", axes=[1], keep_dim=True)
    mass = e.mir.reduce(targets, kind="sum", axes=[1], keep_dim=True)
    leftover = e.mir.mul(rowmax, e.mir.sub(e.mir.constant(1.0, et), mass))
    loss = e.mir.add(e.mir.sub(e.mir.log(sum_exp), picked), leftover)
    return rows_of(e, e.mir.reshape(loss, new_shape=[-1]), result_type)


def lower_indexed_loss(e: Emitter, op: SoftmaxCrossEntropyWithLogitsOp) -> SSAValue:
    targets = one_hot(e, op, op.logits, op.labels)
    return cross_entropy(e, op.logits, targets, op.result.type)


def lower_dense_loss(e: Emitter, op: SoftmaxCrossEntropyOp) -> SSAValue:
    return cross_entropy(e, op.logits, op.targets, op.result.type)


def lower_loss_backward(e: Emitter, op: SoftmaxCrossEntropyBackwardOp) -> SSAValue:
    """`(softmax(logits) - one_hot(labels)) * d_loss[:, None]`."""
    diff = e.mir.sub(e.mir.softmax(op.logits, axis=1), one_hot(e, op, op.logits, op.labels))
    grad = e.mir.mul(diff, e.mir.reshape(op.d_loss, new_shape=[-1, 1]))
    return rows_of(e, grad, op.result.type)


class LowerIndexedLoss(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SoftmaxCrossEntropyWithLogitsOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_indexed_loss(e, op))


class LowerDenseLoss(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SoftmaxCrossEntropyOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_dense_loss(e, op))


class LowerLossBackward(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SoftmaxCrossEntropyBackwardOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_loss_backward(e, op))


@dataclass(frozen=True)
class LowerSoftmaxCrossEntropyPass(ModulePass):
    """Rewrite the softmax-cross-entropy ops (losses and backward) into primitive MIR ops."""

    name = "rlx-lower-softmax-cross-entropy"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, LowerIndexedLoss(), LowerDenseLoss(), LowerLossBackward())
