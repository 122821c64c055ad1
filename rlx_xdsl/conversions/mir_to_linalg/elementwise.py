"""Lowering of MIR constants, casts and elementwise ops: `arith.constant`, and one
broadcasting `linalg.generic` per op whose body applies the op's element rule.

`ELEMENT_RULES` holds what each elementwise op computes on one element (operands
converted to the result dtype by RLX promotion, then the scalar op), so a fused
chain of elementwise ops becomes a single `linalg.generic` too
(`lower_elementwise_body`): fusion decided in MIR survives the lowering.
"""

from __future__ import annotations

import math as pymath
from collections.abc import Callable, Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.ir import Block, Operation, SSAValue
from xdsl.traits import ConstantLike

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg import special
from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    LoweringError,
)
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, storage_type

F64 = dtypes.dtype_named("f64")
from rlx_xdsl.conversions.mir_to_linalg.tensors import (
    PARALLEL,
    Dim,
    broadcast_map,
    identity,
    static_shape,
)
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dtypes import DType, promote
from rlx_xdsl.ir.dense import dense_to_numpy, numpy_to_dense
from rlx_xdsl.registry import OpRegistry
from rlx_xdsl.shapes import DYNAMIC


@LOWERINGS.register(ew.ConstantOp)
def lower_constant(lw: Lowering, op: ew.ConstantOp) -> Sequence[SSAValue]:
    """`arith.constant`; a splat of inf or NaN is a `linalg.fill` of a scalar instead, since
    xDSL 0.74 reads a non-finite `dense<0x...>` back as the integer its bits spell."""
    if _is_splat(op) and lw.result_dtype().is_float and not np.isfinite(float(_splat_value(op))):
        dims = list(op.value.get_shape())
        return [lw.full(dims, lw.result_dtype(), _splat_value(op))]
    return [lw.emit(arith.ConstantOp(signless_dense(op)))]


def signless_dense(op: ew.ConstantOp):
    """The constant's value; unsigned values keep their bytes under the signless type."""
    dt = dtypes.dtype_of(op.value.get_element_type())
    if storage_type(dt) == dt.element_type:
        return op.value
    signless = dtypes.dtype_of(storage_type(dt))
    return numpy_to_dense(dense_to_numpy(op.value).view(signless.numpy), signless.element_type)


@LOWERINGS.register(ew.IotaOp)
def lower_iota(lw: Lowering, op: ew.IotaOp) -> Sequence[SSAValue]:
    """A generic writing each position's index along `dimension` (`linalg.index`)."""
    dt = lw.result_dtype()
    axis = op.normalized_dimension()
    dims = lw.sized_like(op.result.type.get_shape(), op)
    init = lw.empty(dims, dt)
    rank = len(dims)
    body = lambda s, _: s.from_index(s.loop_index(axis), dt)
    return lw.generic([], [(init, identity(rank))], [PARALLEL] * rank, body)


# Element rules: what each elementwise op computes on one element ------------------------

Element = tuple[SSAValue, DType]
"""A scalar operand and its RLX dtype."""

ElementRule = Callable[[Scalars, Operation, Sequence[Element], DType], SSAValue]
"""`rule(s, op, operands, result_dtype) -> result element`."""

ELEMENT_RULES: OpRegistry[ElementRule] = OpRegistry("element rule")
"""The scalar computation of each elementwise MIR op, keyed by op class."""


def apply_rule(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    """`op`'s element rule, its bf16 result rounded to bf16 (`Scalars.rounded`): every op
    of a chain or region body rounds, as in the interpreter, once the backend fuses them."""
    return s.rounded(ELEMENT_RULES[op](s, op, operands, dt), dt)


def _converted(s: Scalars, operands: Sequence[Element], dt: DType) -> list[SSAValue]:
    return [s.cast(x, src, dt) for x, src in operands]


@ELEMENT_RULES.register(ew.CastOp)
def cast_element(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    if not op.is_plain:
        raise LoweringError("a blocked-scaling cast (sf_block) has no semantics to lower (RLX gives it none)")
    ((x, src),) = operands
    return s.cast(x, src, dt)


BINARY: dict[type, Callable[[Scalars, SSAValue, SSAValue, DType], SSAValue]] = {
    ew.AddOp: Scalars.add,
    ew.SubOp: Scalars.sub,
    ew.MulOp: Scalars.mul,
    ew.DivOp: Scalars.div,
    ew.MaxOp: Scalars.max,
    ew.MinOp: Scalars.min,
    ew.PowOp: Scalars.pow,
}


@ELEMENT_RULES.register(*BINARY)
def binary_element(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    """Both operands converted to the result dtype (RLX promotion), then the op."""
    return BINARY[type(op)](s, *_converted(s, operands, dt), dt)


@ELEMENT_RULES.register(ew.CompareOp)
def compare_element(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    """Compared in the operands' promoted dtype (the result is i1)."""
    (_, a), (_, b) = operands
    common = dtypes.dtype_of(promote(a.element_type, b.element_type))
    return s.compare(op.predicate.data.value, *_converted(s, operands, common), common)


@ELEMENT_RULES.register(ew.WhereOp)
def where_element(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    (cond, cond_dt), *values = operands
    return s.select(s.is_true(cond, cond_dt), *_converted(s, values, dt))


def sigmoid(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    one = s.constant(1.0, dt)
    return s.div(one, s.add(one, s.exp(s.neg(x, dt)), dt), dt)


def gelu(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    """Exact GELU `x Φ(x)`, `Φ(x) = erfc(-x / √2) / 2` (Hendrycks and Gimpel, 2016), in f64
    and rounded once, as the interpreter's: `special.erfc` keeps the digits of the negative
    tail that `1 + erf(x / √2)` cancels away."""
    wide = x if dt.name == "f64" else s.cast(x, dt, F64)
    z = s.neg(s.div(wide, s.constant(pymath.sqrt(2.0), F64), F64), F64)
    value = s.mul(s.mul(s.constant(0.5, F64), wide, F64), special.erfc(s, z), F64)
    return value if dt.name == "f64" else s.cast(value, F64, dt)


def gelu_approx(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    """tanh-GELU as the interpreter computes it: `x / (1 + exp(-2u))`,
    `u = √(2/π) (x + 0.044715 x³)`, in f64 and rounded once (`1 + tanh(u)` cancels)."""
    w = x if dt.name == "f64" else s.cast(x, dt, F64)
    cube = s.mul(s.mul(w, w, F64), w, F64)
    u = s.mul(s.constant(pymath.sqrt(2.0 / pymath.pi), F64), s.add(w, s.mul(s.constant(0.044715, F64), cube, F64), F64), F64)
    value = s.div(w, s.add(s.constant(1.0, F64), s.exp(s.mul(s.constant(-2.0, F64), u, F64)), F64), F64)
    return value if dt.name == "f64" else s.cast(value, F64, dt)


def relu(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    return s.max(x, s.constant(0, dt), dt)


def erf(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
    """erf in f64 (`special.erf`, Cody's approximation), rounded once: IREE has no f64
    `math.erf`; erf(±0) = ±0."""
    if dt.name == "f64":
        return special.erf(s, x)
    return s.cast(special.erf(s, s.cast(x, dt, F64)), F64, dt)


def _math(op_class) -> Callable[[Scalars, SSAValue, DType], SSAValue]:
    return lambda s, x, dt: s.unary(op_class, x)


def _widened(op_class) -> Callable[[Scalars, SSAValue, DType], SSAValue]:
    """`op_class` computed in f64 and rounded once for narrower floats: IREE's f32 `sin`,
    `cos`, `tan` reduce large arguments wrongly (±inf at 3.4e38), its f32 `atan` is 39 ulps
    off near 0.66; its f64 ones are libm's."""

    def rule(s: Scalars, x: SSAValue, dt: DType) -> SSAValue:
        if dt.name == "f64" or not dt.is_float:
            return s.unary(op_class, x)
        return s.cast(s.unary(op_class, s.cast(x, dt, F64)), F64, dt)

    return rule


def _f64_by(formula, op_class) -> Callable[[Scalars, SSAValue, DType], SSAValue]:
    """`op_class` for narrower floats, `formula` (a `special` one) for f64: IREE's f64
    `log1p` and `expm1` are the naive `log(1 + x)` and `exp(x) - 1` (0 at x = 1e-16)."""
    return lambda s, x, dt: formula(s, x) if dt.name == "f64" else s.unary(op_class, x)


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
    ew.SinOp: _widened(math.SinOp),
    ew.CosOp: _widened(math.CosOp),
    ew.TanOp: _widened(math.TanOp),
    ew.AtanOp: _widened(math.AtanOp),
    ew.RoundOp: _math(math.RoundOp),  # halves away from zero, as Rust's f32::round
    ew.Log1pOp: _f64_by(special.log1p, math.Log1pOp),
    ew.Expm1Op: _f64_by(special.expm1, math.ExpM1Op),
    ew.ErfOp: erf,
}


@ELEMENT_RULES.register(*UNARY)
def unary_element(s: Scalars, op: Operation, operands: Sequence[Element], dt: DType) -> SSAValue:
    ((x, src),) = operands
    return UNARY[type(op)](s, s.cast(x, src, dt), dt)


# Lowering elementwise ops and fused elementwise bodies ----------------------------------


def lower_elementwise(lw: Lowering, op: Operation) -> Sequence[SSAValue]:
    """One `linalg.generic` over the broadcast shape applying the op's element rule."""
    operand_dtypes = [lw.operand_dtype(i) for i in range(len(op.operands))]
    dt = lw.result_dtype()

    def body(s: Scalars, *args: SSAValue) -> SSAValue:
        return apply_rule(s, op, list(zip(args[: len(operand_dtypes)], operand_dtypes)), dt)

    return [lw.map_elements(op.operands, lw.broadcast_dims(op.operands), dt, body)]


for _op_class in ELEMENT_RULES:
    LOWERINGS.add(_op_class, lower_elementwise)


def _dtype(value: SSAValue) -> DType:
    return dtypes.dtype_of(value.type.element_type)


def lower_elementwise_body(
    lw: Lowering,
    inputs: Sequence[SSAValue],
    input_dtypes: Sequence[DType],
    body: Block,
    out_dims: Sequence[Dim],
) -> list[SSAValue]:
    """One `linalg.generic` computing what `body` yields, element by element.

    `body` is a block of elementwise MIR ops and constants on its arguments (which
    stand for `inputs`), ended by a terminator whose operands are the results.
    Every input broadcasts to `out_dims`, the iteration space; since elementwise
    ops commute with broadcasting, each body value is evaluated at the current
    point. Constants become scalars when they hold one value, and extra inputs
    otherwise.
    """
    out_shape = static_shape(out_dims)
    rank = len(out_dims)
    terminator = body.last_op
    assert terminator is not None
    tensors = list(inputs)
    extra_constants: list[Operation] = [
        op for op in body.ops if op.has_trait(ConstantLike) and not _is_splat(op)
    ]
    for constant in extra_constants:
        tensors.append(lw.emit(arith.ConstantOp(signless_dense(constant))))
    tensor_dtypes = [*input_dtypes, *(_dtype(c.results[0]) for c in extra_constants)]
    results = [_dtype(v) for v in terminator.operands]

    def scalar_body(s: Scalars, *args: SSAValue) -> dict[SSAValue, Element]:
        elements: dict[SSAValue, Element] = {}
        for arg, element, dt in zip(body.args, args, input_dtypes):
            elements[arg] = (element, dt)
        for constant, element, dt in zip(extra_constants, args[len(inputs) :], tensor_dtypes[len(inputs) :]):
            elements[constant.results[0]] = (element, dt)
        for op in body.ops:
            if op is terminator or op in extra_constants:
                continue
            if op.has_trait(ConstantLike):
                dt = _dtype(op.results[0])
                elements[op.results[0]] = (s.constant(_splat_value(op), dt), dt)
                continue
            if ELEMENT_RULES.lookup(op) is None:
                raise LoweringError(f"'{op.name}' in an elementwise body has no element rule")
            dt = _dtype(op.results[0])
            elements[op.results[0]] = (apply_rule(s, op, [elements[v] for v in op.operands], dt), dt)
        return elements

    def result_body(index: int):
        value, dt = terminator.operands[index], results[index]
        return lambda s, *args: s.cast(*scalar_body(s, *args)[value], dt)

    # One generic per result: xDSL cannot parse back a multi-result linalg.generic in
    # custom form. Each computes the whole body; the unused part folds away.
    ins = [(v, broadcast_map(v.type.get_shape(), out_shape)) for v in tensors]
    return [
        lw.generic(ins, [(lw.empty(out_dims, dt), identity(rank))], [PARALLEL] * rank, result_body(i))[0]
        for i, dt in enumerate(results)
    ]


def lower_elementwise_region(lw: Lowering, op: Operation) -> Sequence[SSAValue]:
    """The rule of a fused elementwise region op (`inputs` operands, one-block `body` on
    them, results shaped like what the body yields): one `linalg.generic` per result.

    A region op registers it as its lowering: `LOWERINGS.add(RegionOp, lower_elementwise_region)`.
    """
    inputs = list(op.inputs)
    shape = op.results[0].type.get_shape()
    from_inputs = lw.broadcast_dims(inputs)
    lead = len(shape) - len(from_inputs)
    dims = [d if d != DYNAMIC else from_inputs[i - lead] for i, d in enumerate(shape)]
    input_dtypes = [lw.operand_dtype(i) for i in range(len(inputs))]
    return lower_elementwise_body(lw, inputs, input_dtypes, op.body.block, dims)


def _is_splat(op: Operation) -> bool:
    """A constant holding one value (repeated): it becomes a scalar in the body."""
    values = dense_to_numpy(op.value)
    return values.size >= 1 and bool((values == values.reshape(-1)[0]).all())


def _splat_value(op: ew.ConstantOp) -> float | int | bool:
    return dense_to_numpy(op.value).reshape(-1)[0].item()
