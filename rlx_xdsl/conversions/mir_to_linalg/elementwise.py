"""Lowering of MIR constants, casts and elementwise ops: `arith.constant` and one
broadcasting `linalg.generic` per op, whose body converts the operands to the
result dtype (RLX promotion) and applies the scalar op."""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, math
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import BOOL, Scalars, storage_type
from rlx_xdsl.dense import dense_to_numpy, numpy_to_dense
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl import dtypes
from rlx_xdsl.dtypes import DType, promote


@LOWERINGS.register(ew.ConstantOp)
def lower_constant(lw: Lowering, op: ew.ConstantOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    value = op.value
    if storage_type(dt) != dt.element_type:  # unsigned: the same bytes, signless
        signless = dtypes.dtype_of(storage_type(dt)).numpy
        value = numpy_to_dense(dense_to_numpy(value).view(signless), storage_type(dt))
    return [lw.emit(arith.ConstantOp(value))]


@LOWERINGS.register(ew.CastOp)
def lower_cast(lw: Lowering, op: ew.CastOp) -> Sequence[SSAValue]:
    src, dst = lw.operand_dtype(0), lw.result_dtype()
    return [lw.map_elements([op.input], lw.dims(op.input), dst, lambda s, x, _: s.cast(x, src, dst))]


def _elementwise(lw: Lowering, op, compute: Callable[..., SSAValue], operand_dtypes: Sequence[DType]):
    """One generic over the broadcast shape; `compute(s, *operands)` gets the elements
    already converted to `operand_dtypes`."""
    given = [lw.operand_dtype(i) for i in range(len(op.operands))]

    def body(s: Scalars, *args: SSAValue) -> SSAValue:
        elements = args[: len(given)]  # the output's block argument comes last, unused
        converted = [s.cast(x, src, dst) for x, src, dst in zip(elements, given, operand_dtypes)]
        return compute(s, *converted)

    return [lw.map_elements(op.operands, lw.broadcast_dims(op.operands), lw.result_dtype(), body)]


BINARY: dict[type, Callable[[Scalars, SSAValue, SSAValue, DType], SSAValue]] = {
    ew.AddOp: Scalars.add,
    ew.SubOp: Scalars.sub,
    ew.MulOp: Scalars.mul,
    ew.DivOp: Scalars.div,
    ew.MaxOp: Scalars.max,
    ew.MinOp: Scalars.min,
    ew.PowOp: Scalars.pow,
}


@LOWERINGS.register(*BINARY)
def lower_binary(lw: Lowering, op: ew.BinaryOperation) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    scalar_op = BINARY[type(op)]
    return _elementwise(lw, op, lambda s, a, b: scalar_op(s, a, b, dt), [dt, dt])


@LOWERINGS.register(ew.CompareOp)
def lower_compare(lw: Lowering, op: ew.CompareOp) -> Sequence[SSAValue]:
    dt = dtypes.dtype_of(promote(lw.operand_dtype(0).element_type, lw.operand_dtype(1).element_type))
    predicate = op.predicate.data.value
    return _elementwise(lw, op, lambda s, a, b: s.compare(predicate, a, b, dt), [dt, dt])


@LOWERINGS.register(ew.WhereOp)
def lower_where(lw: Lowering, op: ew.WhereOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    return _elementwise(lw, op, lambda s, c, t, f: s.select(c, t, f), [BOOL, dt, dt])


# Activations ----------------------------------------------------------------------


def sigmoid(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    one = s.constant(1.0, dt)
    return s.div(one, s.add(one, s.exp(s.neg(x, dt)), dt), dt)


def gelu(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    """`x * 0.5 * (1 + erf(x / sqrt(2)))`."""
    scaled = s.mul(x, s.constant(1 / pymath.sqrt(2.0), dt), dt)
    cdf = s.add(s.constant(1.0, dt), s.unary(math.ErfOp, scaled), dt)
    return s.mul(s.mul(x, s.constant(0.5, dt), dt), cdf, dt)


def gelu_approx(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    """`0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."""
    cube = s.mul(s.mul(x, x, dt), x, dt)
    inner = s.add(x, s.mul(s.constant(0.044715, dt), cube, dt), dt)
    t = s.tanh(s.mul(s.constant(pymath.sqrt(2.0 / pymath.pi), dt), inner, dt))
    return s.mul(s.mul(s.constant(0.5, dt), x, dt), s.add(s.constant(1.0, dt), t, dt), dt)


def relu(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    return s.max(x, s.constant(0, dt), dt)


def _math(op_class) -> Callable[[Scalars, SSAValue, DType], SSAValue]:
    return lambda s, x, dt: s.unary(op_class, x)


UNARY: dict[type, Callable[[Scalars, SSAValue, DType], SSAValue]] = {
    ew.GeluOp: gelu,
    ew.GeluApproxOp: gelu_approx,
    ew.SiluOp: lambda s, x, dt: s.mul(x, sigmoid(s, x, dt), dt),
    ew.ReluOp: relu,
    ew.SigmoidOp: sigmoid,
    ew.TanhOp: _math(math.TanhOp),
    ew.ExpOp: _math(math.ExpOp),
    ew.LogOp: _math(math.LogOp),
    ew.SqrtOp: _math(math.SqrtOp),
    ew.RsqrtOp: _math(math.RsqrtOp),
    ew.NegOp: Scalars.neg,
    ew.AbsOp: Scalars.abs,
    ew.SinOp: _math(math.SinOp),
    ew.CosOp: _math(math.CosOp),
    ew.TanOp: _math(math.TanOp),
    ew.AtanOp: _math(math.AtanOp),
    ew.RoundOp: _math(math.RoundOp),  # halves away from zero, as Rust's f32::round
}


@LOWERINGS.register(*UNARY)
def lower_unary(lw: Lowering, op: ew.UnaryOperation) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    scalar_op = UNARY[type(op)]
    return _elementwise(lw, op, lambda s, x: scalar_op(s, x, dt), [dt])

