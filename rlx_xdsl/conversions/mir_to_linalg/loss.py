"""Lowering of MIR softmax cross-entropy ops to row reductions over the classes.

Every op first takes each row's max and sum of exp(x - max) (two `linalg.generic`
reductions). With class-index labels (`[N]` or `[N, 1]`) the loss is then one
parallel loop over the rows, `log(sum) - (x[label] - max)`, reading the label's
logit with `tensor.extract` (a gather): a masked row sum (`class == label` inside a
reduction) is what IREE 3.13's CUDA backend fails to distribute ("failed to
distribute"). A label outside `[0, C)` (or NaN) names no class: the gather reads
class 0 and a `select` gives the bare logsumexp `max + log(sum)` instead. Dense
targets take two more reductions, the target mass and the target-weighted shifted
logits, and `max * (1 - mass) + log(sum) - weighted` (the interpreter's
cancellation-free form); a class whose target is 0 adds nothing to `weighted` (a
`select`, not `0 * (x - max)`, which is NaN for a `-inf` logit). The backward is
elementwise, its one-hot `class == label` in a parallel loop. Rows labelled
`ignore_index` get 0 from a `select` on the label.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import (
    BOOL,
    I64,
    Scalars,
    accumulator,
    lowest_value,
)
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, element_type, identity, loops
from rlx_xdsl.dialects.mir import loss
from rlx_xdsl.dtypes import DType

ROW = loops(2, [0])
"""A per-row value `[N]` in the `(n, c)` loop nest."""


def label_map(n_loops: int, labels: SSAValue) -> AffineMap:
    """Labels `[N]` or `[N, 1]` read at row loop 0 of an `n_loops`-loop nest."""
    return loops(n_loops, [0] if len(labels.type.get_shape()) == 1 else [0, None])


Target = Callable[[Scalars, SSAValue], SSAValue]
"""`target(s, operand_element) -> t[n, c]` in the accumulator dtype."""


def unless_nan(s: Scalars, label: SSAValue, label_dt: DType, hit: SSAValue) -> SSAValue:
    """`hit`, but false for a NaN float label (which selects nothing, as in the kernel)."""
    if not label_dt.is_float:
        return hit
    return s.select(s.is_nan(label), s.constant(False, BOOL), hit)


def one_hot(label_dt: DType, acc: DType) -> Target:
    """The target of a class-index label: 1 where the class loop equals the label."""

    def target(s: Scalars, label: SSAValue) -> SSAValue:
        hit = s.index_compare("eq", s.loop_index(1), s.to_index(label, label_dt))
        hit = unless_nan(s, label, label_dt, hit)
        return s.select(hit, s.constant(1.0, acc), s.constant(0.0, acc))

    return target


def unless_ignored(op: loss.IndexedCrossEntropyOperation, label_dt: DType, dt: DType):
    """`keep(s, label, value)`: `value`, or 0 of `dt` where the label is the op's `ignore_index`."""
    ignore = op.ignored_label()

    def keep(s: Scalars, label: SSAValue, value: SSAValue) -> SSAValue:
        if ignore is None:
            return value
        as_i64 = s.cast(label, label_dt, I64)  # float labels truncate toward zero
        hit = unless_nan(s, label, label_dt, s.compare("eq", as_i64, s.constant(ignore, I64), I64))
        return s.select(hit, s.constant(0, dt), value)

    return keep


def _row_max(lw: Lowering, logits: SSAValue, dt: DType, acc: DType) -> SSAValue:
    return lw.reduce(
        [(logits, identity(2))], lw.dims(logits), [1], acc, lowest_value(acc),
        lambda s, x, m: s.max(m, s.cast(x, dt, acc), acc),
    )  # fmt: skip


def _row_exp_sum(lw: Lowering, logits: SSAValue, peak: SSAValue, dt: DType, acc: DType) -> SSAValue:
    """`sum over c of exp(x - max)` per row."""
    return lw.reduce(
        [(logits, identity(2)), (peak, ROW)], lw.dims(logits), [1], acc, 0,
        lambda s, x, m, e: s.add(e, s.exp(s.sub(s.cast(x, dt, acc), m, acc)), acc),
    )  # fmt: skip


def _per_row_loss(
    lw: Lowering, op, target_operand: SSAValue, target_map: AffineMap, target: Target
) -> SSAValue:
    dt = lw.result_dtype()
    acc = accumulator(dt)
    logits = op.logits
    n = lw.dim(logits, 0)
    peak = _row_max(lw, logits, dt, acc)

    def row_sum(term: Callable[[Scalars, SSAValue, SSAValue], SSAValue]) -> SSAValue:
        """`sum over c of term(shifted logit, target)` per row."""

        def body(s: Scalars, x: SSAValue, m: SSAValue, t_in: SSAValue, total: SSAValue) -> SSAValue:
            shifted = s.sub(s.cast(x, dt, acc), m, acc)
            return s.add(total, term(s, shifted, target(s, t_in)), acc)

        inputs = [(logits, identity(2)), (peak, ROW), (target_operand, target_map)]
        return lw.reduce(inputs, lw.dims(logits), [1], acc, 0, body)

    def weighted_term(s: Scalars, shifted: SSAValue, t: SSAValue) -> SSAValue:
        zero = s.constant(0.0, acc)
        return s.select(s.compare("ne", t, zero, acc), s.mul(t, shifted, acc), zero)

    exp_sum = row_sum(lambda s, shifted, t: s.exp(shifted))
    mass = row_sum(lambda s, shifted, t: t)
    weighted = row_sum(weighted_term)

    def combine(s: Scalars, m, e, t, w, _):
        leftover = s.sub(s.constant(1.0, acc), t, acc)
        value = s.sub(s.add(s.mul(m, leftover, acc), s.log(e), acc), w, acc)
        return s.cast(value, acc, dt)

    return lw.map_elements([peak, exp_sum, mass, weighted], [n], dt, combine)


def picked_class(
    s: Scalars, label: SSAValue, label_dt: DType, classes: SSAValue
) -> tuple[SSAValue, SSAValue]:
    """`(valid, class)` of a label: `valid` when it names a class of `[0, classes)` (float
    labels truncated toward zero, NaN names none), `class` its index, clamped to 0 when
    not valid so that a gather never reads outside the row."""
    if label_dt.is_float:
        # trunc(label) in [0, C) <=> -1 < label < C; ordered comparisons are false on NaN,
        # and no out-of-range float reaches the (then poisonous) float-to-int conversion.
        above = s.compare("gt", label, s.constant(-1.0, label_dt), label_dt)
        below = s.compare("lt", label, s.from_index(classes, label_dt), label_dt)
    else:
        as_i64 = s.cast(label, label_dt, I64)
        above = s.compare("ge", as_i64, s.constant(0, I64), I64)
        below = s.compare("lt", as_i64, s.from_index(classes, I64), I64)
    valid = s.emit(arith.AndIOp(above, below))
    return valid, s.select(valid, s.to_index(label, label_dt), s.index_constant(0))


@LOWERINGS.register(loss.SoftmaxCrossEntropyWithLogitsOp)
def lower_sce_with_logits(lw: Lowering, op: loss.SoftmaxCrossEntropyWithLogitsOp) -> Sequence[SSAValue]:
    """`log(sum) - (x[label] - max)` per row, `max + log(sum)` where the label names no
    class; the label's logit is read with `tensor.extract` (a gather), not summed out of
    the row under a `class == label` mask, which IREE's CUDA backend fails to distribute
    (issue 20)."""
    dt, label_dt = lw.result_dtype(), lw.operand_dtype(1)
    acc = accumulator(dt)
    logits = op.logits
    peak = _row_max(lw, logits, dt, acc)
    exp_sum = _row_exp_sum(lw, logits, peak, dt, acc)
    classes = lw.index_value(lw.dim(logits, 1))
    keep = unless_ignored(op, label_dt, dt)

    def body(s: Scalars, label: SSAValue, m: SSAValue, e: SSAValue, _) -> SSAValue:
        valid, cls = picked_class(s, label, label_dt, classes)
        x = s.cast(s.emit(tensor.ExtractOp(logits, [s.loop_index(0), cls], element_type(logits))), dt, acc)
        lse = s.log(e)
        value = s.select(valid, s.sub(lse, s.sub(x, m, acc), acc), s.add(m, lse, acc))
        return keep(s, label, s.cast(value, acc, dt))

    inputs = [(op.labels, label_map(1, op.labels)), (peak, identity(1)), (exp_sum, identity(1))]
    init = lw.empty([lw.dim(logits, 0)], dt)
    return lw.generic(inputs, [(init, identity(1))], [PARALLEL], body)


@LOWERINGS.register(loss.SoftmaxCrossEntropyOp)
def lower_sce_dense(lw: Lowering, op: loss.SoftmaxCrossEntropyOp) -> Sequence[SSAValue]:
    dt, target_dt = lw.result_dtype(), lw.operand_dtype(1)
    acc = accumulator(dt)
    return [_per_row_loss(lw, op, op.targets, identity(2), lambda s, t: s.cast(t, target_dt, acc))]


@LOWERINGS.register(loss.SoftmaxCrossEntropyBackwardOp)
def lower_sce_backward(lw: Lowering, op: loss.SoftmaxCrossEntropyBackwardOp) -> Sequence[SSAValue]:
    """`(exp(x - max - log(sum)) - one_hot(label)) * d_loss` per element."""
    dt = lw.result_dtype()
    acc = accumulator(dt)
    logits = op.logits
    dims = lw.dims(logits)
    peak = _row_max(lw, logits, dt, acc)
    exp_sum = _row_exp_sum(lw, logits, peak, dt, acc)
    label_dt = lw.operand_dtype(1)
    target = one_hot(label_dt, acc)
    keep = unless_ignored(op, label_dt, dt)
    grad_dt = lw.operand_dtype(2)

    def body(s: Scalars, x, m, e, label, d_loss, _):
        shifted = s.sub(s.cast(x, dt, acc), m, acc)
        prob = s.exp(s.sub(shifted, s.log(e), acc))
        grad = s.mul(s.sub(prob, target(s, label), acc), s.cast(d_loss, grad_dt, acc), acc)
        return keep(s, label, s.cast(grad, acc, dt))

    labels = (op.labels, label_map(2, op.labels))
    inputs = [(logits, identity(2)), (peak, ROW), (exp_sum, ROW), labels, (op.d_loss, ROW)]
    init = lw.empty(dims, dt)
    return lw.generic(inputs, [(init, identity(2))], [PARALLEL, PARALLEL], body)
