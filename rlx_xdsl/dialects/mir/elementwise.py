"""MIR values and elementwise ops: constant, iota, cast, where, compare, binary, activations.

Binary ops broadcast NumPy-style and promote dtypes with `dtypes.promote`;
activations keep their operand's type. Floats follow IEEE 754 (NaN propagates,
`x / 0` is ±inf); integers compute in integers and wrap on overflow; i1 operands
act as the integers 0 and 1, and an i1 result is true where the integer result is
nonzero. f16/bf16 activations compute in f32 and round once.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseIntOrFPElementsAttr,
    IntegerAttr,
    TensorType,
    i1,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    AnyAttr,
    ParamAttrConstraint,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Commutative, ConstantLike, Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    i64_array,
    i64_attr,
    require,
    require_float,
    require_positive,
    sizes_from_like,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attrs import (
    Activation,
    CastConfigAttr,
    ComparePredicate,
    ComparePredicateAttr,
)
from rlx_xdsl.dialects.traits import (
    BOUNDARY,
    DATA_MOVEMENT,
    ELEMENTWISE,
    Elementwise,
    OperandRoles,
    Role,
    ViewOf,
    WritesInPlace,
)
from rlx_xdsl.shapes import (
    DYNAMIC,
    broadcast_shapes,
    fmt_shape,
    normalize_axis,
    tensor,
)


@irdl_op_definition
class ConstantOp(RlxOperation):
    """A tensor literal (`Constant{data}`); its type is the dense attribute's type.

    Literals are read exactly into the element type: a decimal rounds once to
    nearest-even (also for bf16), a hexadecimal literal in a float tensor is the
    element's bit pattern (`0x7FC00000 : f32` is NaN, `0xFF800000` is -inf, as
    MLIR and the printer write non-finite values), and a literal the type cannot
    hold (`1.0e39 : f32`, `300 : i8`) is an error at the literal. Signless `iN`
    takes `[-2^(N-1), 2^N - 1]` (values above the signed maximum wrap). A splat
    (`dense<0.0>`) is stored as one element whatever the shape. Printing and
    parsing back preserves every element bit for bit (NaN payloads and -0.0 included).
    """

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
class IotaOp(RlxOperation):
    """The index ramp along `dimension`: element `[i0, i1, ...]` holds `i_dimension`.

    It costs O(1) in IR size whatever its shape, where a `mir.constant` ramp
    grows with it (a one-hot over a 50k vocabulary compares labels with one).
    The result type gives shape and dtype (integer or float). A `?` dim takes its
    size at run time from `like %t like_dims = [...]`: result dim `i` with
    `like_dims[i] = k >= 0` is as long as `%t`'s dim `k` (an `arange` over an
    imported model's dynamic batch); without `like` the shape must be static. A float
    ramp holds its indices rounded to the dtype (f16 is exact only up to 2048).
    """

    name = "mir.iota"
    like = opt_operand_def(TensorType)
    dimension = prop_def(IntegerAttr[I64])
    like_dims = opt_prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(Pure(), BOUNDARY, OperandRoles.of(like=Role.SHAPE))
    assembly_format = (
        "`dimension` `=` $dimension (`like` $like^ `like_dims` `=` $like_dims `:` type($like))? "
        "attr-dict `:` type($result)"
    )

    def __init__(
        self,
        result_type: TensorType,
        *,
        dimension: int,
        like: SSAValue | None = None,
        like_dims: Sequence[int] | None = None,
    ):
        properties = {"dimension": i64_attr(dimension)}
        if like_dims is not None:
            properties["like_dims"] = i64_array(like_dims)
        super().__init__(
            operands=[[like] if like is not None else []], properties=properties, result_types=[result_type]
        )

    def normalized_dimension(self) -> int:
        return normalize_axis(self.dimension.value.data, tensor_type(self.result).get_num_dims())

    def infer_result_types(self) -> Sequence[Attribute]:
        # Like a cast, the result type is the op's own specification.
        t = tensor_type(self.result)
        kind = dtypes.dtype_of(t.element_type).kind
        require(
            kind in ("int", "uint", "float"),
            self,
            lambda: f"result must have an integer or floating-point element type, got {t.element_type}",
        )
        require(t.get_num_dims() >= 1, self, "result must have rank at least 1, got a scalar")
        shape = t.get_shape()
        from_like = sizes_from_like(self, self.like, self.like_dims, len(shape))
        for i, d in enumerate(shape):
            if i in from_like:
                size = from_like[i]
                require(
                    d in (DYNAMIC, size),
                    self,
                    lambda: f"result dim {i} is {fmt_shape([d])} where `like` gives {fmt_shape([size])}",
                )
            else:
                require(
                    d != DYNAMIC,
                    self,
                    lambda: f"result shape {fmt_shape(shape)} has a `?` at dim {i} that no `like` dim sizes",
                )
        self.normalized_dimension()
        # At run time `like` has a static type: the result takes its sizes.
        return [tensor(t.element_type, [from_like.get(i, d) if d == DYNAMIC else d for i, d in enumerate(shape)])]


def keeps_element_type(op: Operation) -> bool:
    """the cast does no work.

    Such a cast only reinterprets its operand, so LIR lets it alias the operand's buffer.
    """
    return isinstance(op, CastOp) and op.is_noop()


def check_cast_config(op: RlxOperation, config: CastConfigAttr, source: TensorType, to: Attribute) -> None:
    """A blocked-scaling cast: a float tensor of rank >= 2 to a float type, blocks of >= 1 element."""
    block = config.block
    require(len(block) == 2, op, lambda: f"sf_block must be [rows, cols], got {list(block)}")
    require_positive(op, **{"sf_block rows": block[0], "sf_block cols": block[1]})
    require(
        dtypes.is_float(source.element_type) and dtypes.is_float(to),
        op,
        lambda: f"a cast with sf_block scales floats to floats, not {source.element_type} to {to}",
    )
    require(
        source.get_num_dims() >= 2,
        op,
        lambda: f"a cast with sf_block needs an operand of rank >= 2 (blocks span the last two dims), "
        f"got {fmt_shape(source.get_shape())}",
    )


@irdl_op_definition
class CastOp(RlxOperation):
    """Converts elements to the result's element type (`Cast{to}`); shape is kept.

    Floats and integers convert to a float by rounding once to nearest-even (f64 or
    i64 to bf16 too; out-of-range values become ±inf). Float to integer truncates
    toward zero and saturates at the type's range, NaN giving 0 (Rust's `as`).
    Integer to integer wraps (two's complement). Any type to i1 is "nonzero" (NaN is
    true). complex<f32> to a real type takes the real part.

    The optional `config` is RLX's `CastConfig` for blocked-scaling casts
    (`config <sf_block = [rows, cols], round_sf>`); a plain cast has none.
    """

    name = "mir.cast"
    input = operand_def(TensorType)
    config = opt_prop_def(CastConfigAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), DATA_MOVEMENT, WritesInPlace(), ViewOf(when=keeps_element_type))
    assembly_format = "$input (`config` $config^)? " + FUNCTIONAL

    def __init__(self, input: SSAValue, to: Attribute, config: CastConfigAttr | None = None):
        src = tensor_type(input)
        super().__init__(
            operands=[input],
            properties={"config": config},
            result_types=[tensor(to, src.get_shape())],
        )

    @property
    def is_plain(self) -> bool:
        """No scaling: the cast converts each element on its own (`CastConfig::plain`)."""
        return self.config is None

    def is_noop(self) -> bool:
        """The cast does no work: plain, to its operand's own type (`CastConfig::is_noop`)."""
        return self.is_plain and self.input.type == self.result.type

    def infer_result_types(self) -> Sequence[Attribute]:
        # The target dtype is carried by the result type itself, as in arith casts.
        to = tensor_type(self.result.type).element_type
        require(dtypes.is_supported(to), self, lambda: f"cannot cast to unsupported element type {to}")
        source = tensor_type(self.input)
        if self.config is not None:
            check_cast_config(self, self.config, source, to)
        return [tensor(to, source.get_shape())]


@irdl_op_definition
class WhereOp(RlxOperation):
    """`cond ? on_true : on_false`, all three broadcast together.

    `cond` selects `on_true` where it is nonzero; a NaN condition is nonzero, so true.
    """

    name = "mir.where"
    cond = operand_def(TensorType)
    on_true = operand_def(TensorType)
    on_false = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace(), OperandRoles.of(cond=Role.PREDICATE))
    assembly_format = "$cond `,` $on_true `,` $on_false " + FUNCTIONAL

    def __init__(self, cond: SSAValue, on_true: SSAValue, on_false: SSAValue):
        super().__init__(operands=[cond, on_true, on_false])

    def infer_result_types(self) -> Sequence[Attribute]:
        c, t, f = (tensor_type(v) for v in (self.cond, self.on_true, self.on_false))
        shape = broadcast_shapes(c.get_shape(), t.get_shape(), f.get_shape())
        return [tensor(dtypes.promote(t.element_type, f.element_type), shape)]


@irdl_op_definition
class CompareOp(RlxOperation):
    """Elementwise comparison under `predicate`, producing i1 (`Compare(CmpOp)`).

    Operands are compared in their promoted dtype, IEEE style: NaN is unordered,
    so only `ne` holds for it; -0.0 equals 0.0.
    """

    name = "mir.compare"
    predicate = prop_def(ComparePredicateAttr)
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
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
    """What the seven broadcasting binary ops share (`Binary(BinaryOp)`): their
    constructor and type rule. Each op declares its own operands and traits."""

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        super().__init__(operands=[lhs, rhs])

    def infer_result_types(self) -> Sequence[Attribute]:
        a, b = tensor_type(self.operands[0]), tensor_type(self.operands[1])
        shape = broadcast_shapes(a.get_shape(), b.get_shape())
        return [tensor(dtypes.promote(a.element_type, b.element_type), shape)]


BINARY_FORMAT = "$lhs `,` $rhs " + FUNCTIONAL


@irdl_op_definition
class AddOp(BinaryOperation):
    """Elementwise `lhs + rhs` with broadcasting."""

    name = "mir.add"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace(), Commutative())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class SubOp(BinaryOperation):
    """Elementwise `lhs - rhs` with broadcasting."""

    name = "mir.sub"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class MulOp(BinaryOperation):
    """Elementwise `lhs * rhs` with broadcasting."""

    name = "mir.mul"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace(), Commutative())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class DivOp(BinaryOperation):
    """Elementwise `lhs / rhs` with broadcasting.

    Floats: IEEE (`x / 0` is ±inf, `0 / 0` NaN). Integers: truncates toward zero,
    computed in integers (exact at any magnitude); `MIN / -1` wraps to `MIN`;
    division by zero is a run-time error naming the op.
    """

    name = "mir.div"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class MaxOp(BinaryOperation):
    """Elementwise maximum with broadcasting; NaN if either operand is NaN; on floats
    IEEE 754-2019 `maximum`, so `max(+0, -0)` is +0 in either order."""

    name = "mir.max"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace(), Commutative())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class MinOp(BinaryOperation):
    """Elementwise minimum with broadcasting; NaN if either operand is NaN; on floats
    IEEE 754-2019 `minimum`, so `min(+0, -0)` is -0 in either order."""

    name = "mir.min"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace(), Commutative())
    assembly_format = BINARY_FORMAT


@irdl_op_definition
class PowOp(BinaryOperation):
    """Elementwise `lhs ** rhs` with broadcasting.

    Floats: IEEE `pow` (`x ** 0` is 1, a negative base with a fractional exponent
    NaN). Integers: exact repeated multiplication, wrapping on overflow; a negative
    exponent is a run-time error naming the op.
    """

    name = "mir.pow"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = BINARY_FORMAT


BINARY_OPS: tuple[type[BinaryOperation], ...] = (AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp)


class UnaryOperation(RlxOperation):
    """What the activation ops share (`Activation(kind)`): their constructor and
    type rule (the operand's type is kept). Each op declares its own operand and traits."""

    FLOAT_ONLY: ClassVar[bool] = True
    KIND: ClassVar[Activation]
    """Which of RLX's activations the op is (fused and backward ops name it by kind)."""

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input])

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.operands[0])
        if self.FLOAT_ONLY:
            require_float(self, t)
        return [t]


UNARY_FORMAT = "$input " + FUNCTIONAL


@irdl_op_definition
class GeluOp(UnaryOperation):
    """Exact GELU (Hendrycks and Gimpel, 2016; PyTorch's `gelu`): `x * Phi(x)` with the
    Gaussian CDF `Phi(x) = erfc(-x / sqrt(2)) / 2`, computed in f64 and rounded once (the
    negative tail keeps its digits down to the smallest normal result)."""

    name = "mir.gelu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.GELU


@irdl_op_definition
class GeluApproxOp(UnaryOperation):
    """Tanh-approximated GELU (PyTorch's `gelu(approximate="tanh")`):
    `0.5 x (1 + tanh(u))`, `u = sqrt(2/pi) (x + 0.044715 x^3)`, computed as the same number
    `x / (1 + exp(-2u))` in f64 and rounded once (`1 + tanh(u)` would cancel below x = -5)."""

    name = "mir.gelu_approx"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.GELU_APPROX


@irdl_op_definition
class SiluOp(UnaryOperation):
    """SiLU (swish): `x * sigmoid(x)`."""

    name = "mir.silu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.SILU


@irdl_op_definition
class ReluOp(UnaryOperation):
    """`max(x, 0)` (IEEE 754-2019 `maximum`, so `relu(-0)` is +0); NaN stays NaN."""

    name = "mir.relu"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.RELU
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class SigmoidOp(UnaryOperation):
    """Logistic sigmoid `1 / (1 + exp(-x))`."""

    name = "mir.sigmoid"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.SIGMOID


@irdl_op_definition
class TanhOp(UnaryOperation):
    """Hyperbolic tangent."""

    name = "mir.tanh"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.TANH


@irdl_op_definition
class ExpOp(UnaryOperation):
    """Natural exponential."""

    name = "mir.exp"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.EXP


@irdl_op_definition
class LogOp(UnaryOperation):
    """Natural logarithm."""

    name = "mir.log"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.LOG


@irdl_op_definition
class SqrtOp(UnaryOperation):
    """Square root."""

    name = "mir.sqrt"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.SQRT


@irdl_op_definition
class RsqrtOp(UnaryOperation):
    """Reciprocal square root `1 / sqrt(x)`."""

    name = "mir.rsqrt"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.RSQRT


@irdl_op_definition
class NegOp(UnaryOperation):
    """Negation `-x` (integers wrap: `-MIN` is `MIN`; unsigned `-x` is `2^N - x`)."""

    name = "mir.neg"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.NEG
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class AbsOp(UnaryOperation):
    """Absolute value (integers wrap: `abs(MIN)` is `MIN`)."""

    name = "mir.abs"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.ABS
    FLOAT_ONLY: ClassVar[bool] = False


@irdl_op_definition
class SinOp(UnaryOperation):
    """Sine."""

    name = "mir.sin"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.SIN


@irdl_op_definition
class CosOp(UnaryOperation):
    """Cosine."""

    name = "mir.cos"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.COS


@irdl_op_definition
class TanOp(UnaryOperation):
    """Tangent."""

    name = "mir.tan"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.TAN


@irdl_op_definition
class AtanOp(UnaryOperation):
    """Arc tangent."""

    name = "mir.atan"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.ATAN


@irdl_op_definition
class RoundOp(UnaryOperation):
    """Round to nearest, halves away from zero (as Rust's `f32::round`), exactly.

    Computed as `trunc(x)` plus the sign of x where `|x - trunc(x)| >= 0.5` (both
    exact), so `0.49999997` rounds to 0 and odd integers above 2^23 stay put; -0.4
    gives -0.0; ±inf and NaN are kept; integers are unchanged.
    """

    name = "mir.round"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.ROUND


@irdl_op_definition
class Log1pOp(UnaryOperation):
    """`log(1 + x)`, precise where `|x|` is small: `log1p(1e-8)` is `1e-8`, where
    `log(1 + 1e-8)` rounds to 0 in f32. -inf at `x = -1`, NaN below (C's `log1p`)."""

    name = "mir.log1p"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.LOG1P


@irdl_op_definition
class Expm1Op(UnaryOperation):
    """`exp(x) - 1`, precise where `|x|` is small: `expm1(1e-8)` is `1e-8`, where
    `exp(1e-8) - 1` rounds to 0 in f32. -1 as `x` goes to -inf (C's `expm1`)."""

    name = "mir.expm1"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.EXPM1


@irdl_op_definition
class ErfOp(UnaryOperation):
    """The error function `erf(x) = 2/sqrt(pi) * integral_0^x exp(-t^2) dt` (C's `erf`;
    ONNX `Erf`, `torch.erf`): odd, -1 at -inf, 1 at inf, NaN kept. Float operands only;
    f16/bf16 compute in f32 and round once."""

    name = "mir.erf"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = UNARY_FORMAT
    KIND: ClassVar[Activation] = Activation.ERF


ACTIVATION_OPS: tuple[type[UnaryOperation], ...] = (
    GeluOp, GeluApproxOp, SiluOp, ReluOp, SigmoidOp, TanhOp, ExpOp, LogOp, SqrtOp,
    RsqrtOp, NegOp, AbsOp, SinOp, CosOp, TanOp, AtanOp, RoundOp, Log1pOp, Expm1Op,
    ErfOp,
)  # fmt: skip

_BY_KIND: dict[Activation, type[UnaryOperation]] = {op.KIND: op for op in ACTIVATION_OPS}


def activation_op(kind: Activation | str) -> type[UnaryOperation]:
    """The op class of an activation kind (`Activation.SILU` -> `SiluOp`)."""
    return _BY_KIND[Activation(kind)]


OPS = [ConstantOp, IotaOp, CastOp, WhereOp, CompareOp, *BINARY_OPS, *ACTIVATION_OPS]
