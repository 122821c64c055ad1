"""MIR values and elementwise ops: constant, cast, where, compare, binary, activations.

Binary ops broadcast NumPy-style and promote dtypes with `dtypes.promote`;
activations keep their operand's type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType, i1
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Commutative, ConstantLike, Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import FUNCTIONAL, RlxOperation, require, require_float, tensor_type
from rlx_xdsl.dialects.mir.attrs import ComparePredicate, ComparePredicateAttr
from rlx_xdsl.dialects.traits import BOUNDARY, DATA_MOVEMENT, ELEMENTWISE, Elementwise
from rlx_xdsl.shapes import broadcast_shapes, tensor


@irdl_op_definition
class ConstantOp(RlxOperation):
    """A tensor literal (`Constant{data}`); its type is the dense attribute's type."""

    name = "mir.constant"
    T: ClassVar = VarConstraint("T", base(TensorType))
    value = prop_def(ParamAttrConstraint(DenseIntOrFPElementsAttr, (T, AnyAttr())))
    result = result_def(T)
    traits = traits_def(Pure(), ConstantLike(), BOUNDARY)
    assembly_format = "$value attr-dict"

    def __init__(self, value: DenseIntOrFPElementsAttr):
        super().__init__(properties={"value": value})

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.value.type]


@irdl_op_definition
class CastOp(RlxOperation):
    """Converts elements to the result's element type (`Cast{to}`); shape is kept."""

    name = "mir.cast"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), DATA_MOVEMENT)
    assembly_format = "$input " + FUNCTIONAL

    def __init__(self, input: SSAValue, to: Attribute):
        src = tensor_type(input)
        super().__init__(operands=[input], result_types=[TensorType(to, src.get_shape())])

    def infer_result_types(self) -> Sequence[Attribute]:
        # The target dtype is carried by the result type itself, as in arith casts.
        to = tensor_type(self.result.type).element_type
        require(dtypes.is_supported(to), self, f"cannot cast to unsupported element type {to}")
        return [tensor(to, tensor_type(self.input).get_shape())]


@irdl_op_definition
class WhereOp(RlxOperation):
    """`cond ? on_true : on_false`, all three broadcast together."""

    name = "mir.where"
    cond = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE)
    assembly_format = "$cond `,` $on_true `,` $on_false " + FUNCTIONAL

    def __init__(self, cond: SSAValue, on_true: SSAValue, on_false: SSAValue):
        super().__init__(operands=[cond, on_true, on_false])

    def infer_result_types(self) -> Sequence[Attribute]:
        c, t, f = (tensor_type(v) for v in (self.cond, self.on_true, self.on_false))
        shape = broadcast_shapes(c.get_shape(), t.get_shape(), f.get_shape())
        return [tensor(dtypes.promote(t.element_type, f.element_type), shape)]


@irdl_op_definition
class CompareOp(RlxOperation):
    """Elementwise comparison under `predicate`, producing i1 (`Compare(CmpOp)`)."""

    name = "mir.compare"
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE)
    assembly_format = "$predicate `,` $lhs `,` $rhs " + FUNCTIONAL

    def __init__(self, lhs: SSAValue, rhs: SSAValue, predicate: str | ComparePredicate):
        super().__init__(
            operands=[lhs, rhs],
            properties={"predicate": ComparePredicateAttr(ComparePredicate(predicate))},
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        a, b = tensor_type(self.lhs), tensor_type(self.rhs)
        dtypes.promote(a.element_type, b.element_type)  # operands must be comparable
        return [tensor(i1, broadcast_shapes(a.get_shape(), b.get_shape()))]


class BinaryOperation(RlxOperation):
    """Shared definition of the seven broadcasting binary ops (`Binary(BinaryOp)`)."""

    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$lhs `,` $rhs " + FUNCTIONAL

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        a, b = tensor_type(self.lhs), tensor_type(self.rhs)
        shape = broadcast_shapes(a.get_shape(), b.get_shape())
        return [tensor(dtypes.promote(a.element_type, b.element_type), shape)]


def _binary(op_name: str, doc: str, commutative: bool) -> type[BinaryOperation]:
    extra = (Commutative(),) if commutative else ()
    cls = type(
        f"{op_name.title().replace('_', '')}Op",
        (BinaryOperation,),
        {
            "__doc__": doc,
            "__module__": __name__,
            "name": f"mir.{op_name}",
            "traits": traits_def(Pure(), Elementwise(), ELEMENTWISE, *extra),
        },
    )
    return irdl_op_definition(cls)


AddOp = _binary("add", "Elementwise `lhs + rhs` with broadcasting.", True)
SubOp = _binary("sub", "Elementwise `lhs - rhs` with broadcasting.", False)
MulOp = _binary("mul", "Elementwise `lhs * rhs` with broadcasting.", True)
DivOp = _binary("div", "Elementwise `lhs / rhs` with broadcasting (integer division truncates).", False)
MaxOp = _binary("max", "Elementwise maximum with broadcasting.", True)
MinOp = _binary("min", "Elementwise minimum with broadcasting.", True)
PowOp = _binary("pow", "Elementwise `lhs ** rhs` with broadcasting.", False)

BINARY_OPS: tuple[type[BinaryOperation], ...] = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp)


class UnaryOperation(RlxOperation):
    """Shared definition of the activation ops (`Activation(kind)`): type is kept."""

    input = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$input " + FUNCTIONAL
    FLOAT_ONLY: ClassVar[bool] = True

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input])

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        if self.FLOAT_ONLY:
            require_float(self, t)
        return [t]


def _unary(op_name: str, doc: str, float_only: bool = True) -> type[UnaryOperation]:
    cls = type(
        "".join(part.title() for part in op_name.split("_")) + "Op",
        (UnaryOperation,),
        {
            "__doc__": doc,
            "__module__": __name__,
            "name": f"mir.{op_name}",
            "__annotations__": {"FLOAT_ONLY": ClassVar[bool]},
            "FLOAT_ONLY": float_only,
            "traits": traits_def(Pure(), Elementwise(), ELEMENTWISE),
        },
    )
    return irdl_op_definition(cls)


GeluOp = _unary("gelu", "Exact GELU: `x * Phi(x)` with the Gaussian CDF `Phi`.")
GeluApproxOp = _unary(
    "gelu_approx", "Tanh-approximated GELU: `0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))`."
)
SiluOp = _unary("silu", "SiLU (swish): `x * sigmoid(x)`.")
ReluOp = _unary("relu", "`max(x, 0)`.", float_only=False)
SigmoidOp = _unary("sigmoid", "Logistic sigmoid `1 / (1 + exp(-x))`.")
TanhOp = _unary("tanh", "Hyperbolic tangent.")
ExpOp = _unary("exp", "Natural exponential.")
LogOp = _unary("log", "Natural logarithm.")
SqrtOp = _unary("sqrt", "Square root.")
RsqrtOp = _unary("rsqrt", "Reciprocal square root `1 / sqrt(x)`.")
NegOp = _unary("neg", "Negation `-x`.", float_only=False)
AbsOp = _unary("abs", "Absolute value.", float_only=False)
SinOp = _unary("sin", "Sine.")
CosOp = _unary("cos", "Cosine.")
TanOp = _unary("tan", "Tangent.")
AtanOp = _unary("atan", "Arc tangent.")
RoundOp = _unary("round", "Round to nearest, halves away from zero (as Rust's `f32::round`).")

ACTIVATION_OPS: tuple[type[UnaryOperation], ...] = (
    GeluOp, GeluApproxOp, SiluOp, ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp,
    RsqrtOp, NegOp, AbsOp, SinOp, CosOp, TanOp, AtanOp, RoundOp,
)  # fmt: skip

OPS = [ConstantOp, CastOp, WhereOp, CompareOp, *BINARY_OPS, *ACTIVATION_OPS]
