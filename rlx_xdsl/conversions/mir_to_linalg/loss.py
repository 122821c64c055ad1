"""Lowering of MIR softmax cross-entropy ops to row reductions over the classes.

Each row's statistics (max, sum of exp(x - max), the target mass and the
target-weighted shifted logits) come from two `linalg.generic` reductions; the
loss is then `max * (1 - mass) + log(sum) - weighted`, the interpreter's
cancellation-free form. Class-index labels become one-hot targets inside the
loop body (`class == label`), so a label outside `[0, C)` selects no class.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import (
    Scalars,
    accumulator,
    lowest_value,
)
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, identity, loops
from rlx_xdsl.dialects.mir import loss
from rlx_xdsl.dtypes import DType

ROW = loops(2, [0])
"""A per-row value `[N]` in the `(n, c)` loop nest."""

Target = Callable[[Scalars, SSAValue], SSAValue]
"""`target(s, operand_element) -> t[n, c]` in the accumulator dtype."""


def one_hot(label_dt: DType, acc: DType) -> Target:
    """The target of a class-index label: 1 where the class loop equals the label."""

    def target(s: Scalars, label: SSAValue) -> SSAValue:
        hit = s.index_compare("eq", s.loop_index(1), s.to_index(label, label_dt))
        return s.select(hit, s.constant(1.0, acc), s.constant(0.0, acc))

    return target


def _row_max(lw: Lowering, logits: SSAValue, dt: DType, acc: DType) -> SSAValue:
    return lw.reduce(
        [(logits, identity(2))], lw.dims(logits), [1], acc, lowest_value(acc),
        lambda s, x, m: s.max(m, s.cast(x, dt, acc), acc),
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

    exp_sum = row_sum(lambda s, shifted, t: s.exp(shifted))
    mass = row_sum(lambda s, shifted, t: t)
    weighted = row_sum(lambda s, shifted, t: s.mul(t, shifted, acc))

    def combine(s: Scalars, m, e, t, w, _):
        leftover = s.sub(s.constant(1.0, acc), t, acc)
        value = s.sub(s.add(s.mul(m, leftover, acc), s.log(e), acc), w, acc)
        return s.cast(value, acc, dt)

    return lw.map_elements([peak, exp_sum, mass, weighted], [n], dt, combine)


@LOWERINGS.register(loss.SoftmaxCrossEntropyWithLogitsOp)
def lower_sce_with_logits(lw: Lowering, op: loss.SoftmaxCrossEntropyWithLogitsOp) -> Sequence[SSAValue]:
    acc = accumulator(lw.result_dtype())
    return [_per_row_loss(lw, op, op.labels, ROW, one_hot(lw.operand_dtype(1), acc))]


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
    exp_sum = lw.reduce(
        [(logits, identity(2)), (peak, ROW)], dims, [1], acc, 0,
        lambda s, x, m, e: s.add(e, s.exp(s.sub(s.cast(x, dt, acc), m, acc)), acc),
    )  # fmt: skip
    target = one_hot(lw.operand_dtype(1), acc)
    grad_dt = lw.operand_dtype(2)

    def body(s: Scalars, x, m, e, label, d_loss, _):
        shifted = s.sub(s.cast(x, dt, acc), m, acc)
        prob = s.exp(s.sub(shifted, s.log(e), acc))
        grad = s.mul(s.sub(prob, target(s, label), acc), s.cast(d_loss, grad_dt, acc), acc)
        return s.cast(grad, acc, dt)

    inputs = [(logits, identity(2)), (peak, ROW), (exp_sum, ROW), (op.labels, ROW), (op.d_loss, ROW)]
    init = lw.empty(dims, dt)
    return lw.generic(inputs, [(init, identity(2))], [PARALLEL, PARALLEL], body)
