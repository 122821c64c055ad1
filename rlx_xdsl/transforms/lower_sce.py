"""`rlx-lower-softmax-cross-entropy`: the three SCE ops as primitive MIR, for backends
without a native kernel (upstream RLX's `LowerSoftmaxCrossEntropy`).

Both losses share one chain, the interpreter's formula with the row maximum `m`
subtracted first:

    loss[n] = log(sum_c exp(x - m)) - sum_{c: t != 0} t * (x - m) + m * (1 - sum_c t)

where `t` is the dense targets, or the one-hot rows of the labels. The last term
vanishes when a target row sums to one; it keeps the definition
`logsumexp(x) - sum_c t * x` exact for any other targets (an out-of-range label's
all-zero row gives the bare logsumexp). Classes whose target is 0 are left out of the
weighted sum with a `where`, not multiplied by 0: a `-inf` logit makes `x - m = -inf`,
and `0 * -inf` would turn a finite loss into NaN. The backward is
`(softmax(x) - one_hot(labels)) * d_loss[:, None]`. Labels may be `[N]` or `[N, 1]`;
rows labelled `ignore_index` get 0 (loss and gradient) from a final `where`.

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
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.loss import (
    IndexedCrossEntropyOperation,
    SoftmaxCrossEntropyBackwardOp,
    SoftmaxCrossEntropyOp,
    SoftmaxCrossEntropyWithLogitsOp,
)
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape
from rlx_xdsl.transforms.decompose_backward.emit import keep_where, scalar
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


def class_ids(e: Emitter, op: IndexedCrossEntropyOperation) -> SSAValue:
    """The labels as an `[N, 1]` column of integer class ids.

    Float labels are cast to i64, which truncates toward zero as the kernel does; a
    NaN label (which the cast would make 0) becomes an id that selects no class and
    is not the op's `ignore_index`, as in the kernel.
    """
    labels = op.labels
    ids = labels
    if dtypes.is_float(tensor_type(labels).element_type):
        no_class = -2 if op.ignored_label() == -1 else -1
        is_number = e.mir.compare(labels, labels, "eq")
        ids = e.mir.where(is_number, e.mir.cast(labels, i64), e.mir.constant(no_class, i64))
    if len(tensor_type(ids).get_shape()) == 1:
        ids = e.mir.reshape(ids, new_shape=[-1, 1])
    return ids


def one_hot(e: Emitter, op: Operation, logits: SSAValue, ids: SSAValue) -> SSAValue:
    """`[N, C]` i1 rows: true where `ids[n] == c`."""
    logits_type = tensor_type(logits)
    classes = logits_type.get_shape()[1]
    if classes == DYNAMIC:
        raise OpError(
            op,
            f"'{op.name}' cannot be lowered: logits {fmt_shape(logits_type.get_shape())} have a "
            "dynamic class count, and the one-hot's mir.iota ramp needs it static",
        )
    ramp = e.mir.iota([1, classes], i64, dimension=1)
    return e.mir.compare(ids, ramp, "eq")


def unless_ignored(e: Emitter, op: IndexedCrossEntropyOperation, ids: SSAValue, rows: SSAValue) -> SSAValue:
    """`rows` (`[N, 1]` or `[N, C]`), with 0 in the rows whose id is the op's `ignore_index`.

    A `where`, not a product with a 0/1 mask: an ignored row's value may be inf or NaN.
    """
    ignore = op.ignored_label()
    if ignore is None:
        return rows
    ignored = e.mir.compare(ids, e.mir.constant(ignore, i64), "eq")
    return e.mir.where(ignored, scalar(e, 0.0, rows), rows)


def rows_of(e: Emitter, value: SSAValue, result_type: TensorType) -> SSAValue:
    """`value` reshaped to `result_type`'s shape (one `?` becomes -1), when it differs.

    A dim that is `?` in the logits may be static in the op's result (the labels
    know it); the replacement must have the result's exact type.
    """
    if value.type == result_type:
        return value
    shape = [-1 if d == DYNAMIC else d for d in result_type.get_shape()]
    return e.mir.reshape(value, new_shape=shape)


def cross_entropy(e: Emitter, logits: SSAValue, targets: SSAValue, selected: SSAValue) -> SSAValue:
    """`logsumexp(logits[n]) - sum_c targets[n, c] * logits[n, c]` as `[N, 1]`, computed with
    the max subtracted; `selected` (i1) marks the classes whose target is not 0.

    Only selected classes enter the weighted sum, through a `where`: `x - m` is `-inf` for
    a `-inf` logit, and a plain product would make `0 * -inf = NaN` of a class that the
    loss does not select.
    """
    et = tensor_type(logits).element_type
    rowmax = e.mir.reduce(logits, kind="max", axes=[1], keep_dim=True)
    shifted = e.mir.sub(logits, rowmax)
    sum_exp = e.mir.reduce(e.mir.exp(shifted), kind="sum", axes=[1], keep_dim=True)
    terms = keep_where(e, selected, e.mir.mul(targets, shifted))
    picked = e.mir.reduce(terms, kind="sum", axes=[1], keep_dim=True)
    mass = e.mir.reduce(targets, kind="sum", axes=[1], keep_dim=True)
    leftover = e.mir.mul(rowmax, e.mir.sub(e.mir.constant(1.0, et), mass))
    return e.mir.add(e.mir.sub(e.mir.log(sum_exp), picked), leftover)


def per_row(e: Emitter, loss: SSAValue, result_type: TensorType) -> SSAValue:
    """The `[N, 1]` loss as the op's `[N]` result."""
    return rows_of(e, e.mir.reshape(loss, new_shape=[-1]), result_type)


def lower_indexed_loss(e: Emitter, op: SoftmaxCrossEntropyWithLogitsOp) -> SSAValue:
    ids = class_ids(e, op)
    hit = one_hot(e, op, op.logits, ids)
    targets = e.mir.cast(hit, tensor_type(op.logits).element_type)
    loss = cross_entropy(e, op.logits, targets, hit)
    return per_row(e, unless_ignored(e, op, ids, loss), op.result.type)


def lower_dense_loss(e: Emitter, op: SoftmaxCrossEntropyOp) -> SSAValue:
    selected = e.mir.compare(op.targets, scalar(e, 0.0, op.targets), "ne")
    return per_row(e, cross_entropy(e, op.logits, op.targets, selected), op.result.type)


def lower_loss_backward(e: Emitter, op: SoftmaxCrossEntropyBackwardOp) -> SSAValue:
    """`(softmax(logits) - one_hot(labels)) * d_loss[:, None]`, 0 in ignored rows."""
    ids = class_ids(e, op)
    hit = e.mir.cast(one_hot(e, op, op.logits, ids), tensor_type(op.logits).element_type)
    diff = e.mir.sub(e.mir.softmax(op.logits, axis=1), hit)
    grad = e.mir.mul(diff, e.mir.reshape(op.d_loss, new_shape=[-1, 1]))
    return rows_of(e, unless_ignored(e, op, ids, grad), op.result.type)


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
    STATISTICS = tuple(map(pattern_statistic, (LowerIndexedLoss, LowerDenseLoss, LowerLossBackward)))

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, LowerIndexedLoss(), LowerDenseLoss(), LowerLossBackward())
