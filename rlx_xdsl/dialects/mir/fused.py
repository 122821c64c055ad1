"""MIR fused ops: one kernel standing for a chain of primitive ops.

Fusion passes create them (and HIR lowers some blocks straight to them);
`rlx-unfuse` expands each back into its primitive chain, so a fused op always
means exactly what that chain computes. Their types follow the same rules as
the chain's ops: a fused op never promotes, broadcasts or casts anything its
chain would not.

* `mir.fused_matmul_bias_act`: `act(x @ w + bias)` (`FusedMatMulBiasAct`);
* `mir.fused_swiglu`: `silu(gate) * up` of the two halves of the last axis (`FusedSwiGLU`);
* `mir.fused_residual_rms_norm`: `rms_norm(x + residual (+ bias))` (`FusedResidualRmsNorm`),
  keeping the norm's `axis`, which RLX drops.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    TypeAttribute,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    FUNCTIONAL_SEGMENTED,
    RlxOperation,
    SegmentedSignature,
    i64_attr,
    require,
    require_float,
    require_min_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attrs import Activation, ActivationAttr
from rlx_xdsl.dialects.mir.contraction import matmul_type
from rlx_xdsl.dialects.mir.elementwise import activation_op
from rlx_xdsl.dialects.mir.norm import AxisNormOperation
from rlx_xdsl.dialects.traits import COMPUTE, ELEMENTWISE, REDUCTION
from rlx_xdsl.shapes import DYNAMIC, broadcast_shapes, broadcasts_to, fmt_shape, tensor


def _element_type(dtype: str | Attribute) -> Attribute:
    """An element type given by RLX dtype name ("bf16") or as the type itself."""
    return dtypes.dtype_named(dtype).element_type if isinstance(dtype, str) else dtype


def _activation_attr(kind: Activation | str | None) -> ActivationAttr | None:
    return None if kind is None else ActivationAttr(Activation(kind))


@irdl_op_definition
class FusedMatmulBiasActOp(RlxOperation):
    """`act(x @ w + bias)`, or `x @ w + bias` without an activation (`FusedMatMulBiasAct`).

    The matmul follows `mir.matmul` (batch dims broadcast); `bias` broadcasts
    NumPy-style to the matmul result without enlarging it and has its element
    type. Any of the 17 activations may be fused (the fusion pass folds only
    gelu and silu, as RLX; HIR's `Linear` keeps whichever it has).
    """

    name = "mir.fused_matmul_bias_act"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    activation = opt_prop_def(ActivationAttr)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $bias (`activation` `=` $activation^)? " + FUNCTIONAL

    def __init__(
        self, x: SSAValue, w: SSAValue, bias: SSAValue, *, activation: Activation | str | None = None
    ):
        super().__init__(operands=[x, w, bias], properties={"activation": _activation_attr(activation)})

    @property
    def kind(self) -> Activation | None:
        """The fused activation, or None."""
        return None if self.activation is None else self.activation.data

    def infer_result_types(self) -> Sequence[Attribute]:
        product = matmul_type(self, self.x, self.w, ("x", "w"))
        bias = tensor_type(self.bias)
        require_same_element_type(
            self, product, {"bias": bias}, "{what} element type {actual} differs from the matmul's {expected}"
        )
        require(
            broadcasts_to(bias.get_shape(), product.get_shape()),
            self,
            lambda: f"bias shape {fmt_shape(bias.get_shape())} does not broadcast to the matmul result shape "
            f"{fmt_shape(product.get_shape())}",
        )
        if self.kind is not None and activation_op(self.kind).FLOAT_ONLY and not dtypes.is_float(product.element_type):
            require_float(self, product, f"the result of activation {self.kind}")  # fails: the message is needed
        return [product]


@irdl_op_definition
class FusedSwigluOp(RlxOperation):
    """`silu(gate) * up` over the two halves of the last axis, `[..., 2N] -> [..., N]` (`FusedSwiGLU`).

    `up` is the low half and `gate` the high half, unless `gate_first`. With
    `cast_to` the product is then converted to that element type (as
    `mir.cast`); the result type carries it too.
    """

    name = "mir.fused_swiglu"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    gate_first = opt_prop_def(UnitAttr)
    cast_to = opt_prop_def(TypeAttribute)
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$x (`gate_first` $gate_first^)? (`cast_to` `=` $cast_to^)? " + FUNCTIONAL

    def __init__(self, x: SSAValue, *, gate_first: bool = False, cast_to: str | Attribute | None = None):
        super().__init__(
            operands=[x],
            properties={
                "gate_first": UnitAttr() if gate_first else None,
                "cast_to": None if cast_to is None else _element_type(cast_to),
            },
        )

    @property
    def is_gate_first(self) -> bool:
        return self.gate_first is not None

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x)
        require_min_rank(self, x, 1, "operand")
        *lead, width = x.get_shape()
        require(
            width == DYNAMIC or width % 2 == 0,
            self,
            lambda: f"last dim {width} does not split into equal up and gate halves",
        )
        target = x.element_type if self.cast_to is None else self.cast_to
        require(dtypes.is_supported(target), self, lambda: f"cannot cast to unsupported element type {target}")
        return [tensor(target, [*lead, width if width == DYNAMIC else width // 2])]


class FusedResidualNormOperation(AxisNormOperation):
    """What the fused residual norms share: they normalise `x + residual (+ bias)`.

    The sum follows the `mir.add` chain it replaces, except that its operands
    must share one element type (a fused op hides no promotion); gamma and beta
    then follow the norm's rule against the sum.
    """

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int = -1,
        eps: float,
    ):
        RlxOperation.__init__(
            self,
            operands=[x, residual, bias, gamma, beta],
            properties={"axis": i64_attr(axis), "eps": FloatAttr(eps, f32)},
        )

    def summands(self) -> dict[str, SSAValue]:
        """The values added before normalising, by operand name."""
        values = {"x": self.x, "residual": self.residual}
        if self.bias is not None:
            values["bias"] = self.bias
        return values

    def normalized_input_type(self) -> TensorType:
        types = {what: tensor_type(v) for what, v in self.summands().items()}
        x = types.pop("x")
        require_same_element_type(self, x, types, "{what} element type {actual} differs from x's {expected}")
        shape = broadcast_shapes(x.get_shape(), *(t.get_shape() for t in types.values()))
        return tensor(x.element_type, shape)


SEGMENTED_NORM_FORMAT = (
    "$x `,` $residual `,` (`bias` $bias^ `,`)? $gamma `,` $beta `axis` `=` $axis `eps` `=` $eps "
    + FUNCTIONAL_SEGMENTED
)
"""`%x, %residual, bias %b, %gamma, %beta axis = -1 eps = ...` (operands in RLX's order)."""


@irdl_op_definition
class FusedResidualRmsNormOp(FusedResidualNormOperation):
    """`rms_norm(x + residual (+ bias), gamma, beta, axis, eps)` (`FusedResidualRmsNorm`).

    Operands in RLX's order `[x, residual, (bias), gamma, beta]`; the optional
    bias is written `bias %b`. Unlike RLX the norm's `axis` is kept.
    """

    name = "mir.fused_residual_rms_norm"
    x = operand_def(TensorType)
    residual = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    custom_directives = (SegmentedSignature,)
    assembly_format = SEGMENTED_NORM_FORMAT

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        bias: SSAValue | None = None,
        *,
        axis: int = -1,
        eps: float = 1e-6,
    ):
        """As `mir.rms_norm`, with RLX's default eps."""
        super().__init__(x, residual, gamma, beta, bias, axis=axis, eps=eps)


OPS = [FusedMatmulBiasActOp, FusedSwigluOp, FusedResidualRmsNormOp]
ATTRIBUTES: list[type] = []
