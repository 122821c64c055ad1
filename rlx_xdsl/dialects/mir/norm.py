"""MIR normalisation ops: layer_norm, rms_norm, group_norm, batch_norm_inference.

Each takes `[x, gamma, beta]` and returns x's type. gamma and beta share x's
element type (AMP casts all three together), and x must be floating point. The
statistics are taken per row of the normalised region; the interpreter
computes f16/bf16 in f32 (statistics and affine) and rounds the result once.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_float,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.traits import COMPUTE, REDUCTION
from rlx_xdsl.shapes import (
    DYNAMIC,
    broadcasts_to,
    dims_match,
    fmt_shape,
    normalize_axis,
)


class NormOperation(RlxOperation):
    """The checks shared by the three normalisations of `x` with `gamma`, `beta` and `eps`.

    Each op declares its own operands and properties; these methods only read them.
    """

    def affine_operands(self) -> tuple[tuple[str, SSAValue], ...]:
        return (("gamma", self.gamma), ("beta", self.beta))

    def check_attributes(self) -> None:
        eps = self.eps.value.data
        require(eps > 0, self, lambda: f"eps must be positive, got {eps}")

    def normalized_input_type(self) -> TensorType:
        """The type of the tensor being normalised: x's (fused residual norms: x + residual)."""
        return tensor_type(self.x)

    def check_operands(self) -> TensorType:
        """The normalised input is floating point and gamma/beta share its element type;
        returns its type."""
        x = self.normalized_input_type()
        require_float(self, x)
        require_same_element_type(
            self,
            x,
            {what: tensor_type(value) for what, value in self.affine_operands()},
            "{what} element type {actual} differs from the operand's {expected}",
        )
        return x


class AxisNormOperation(NormOperation):
    """layer_norm and rms_norm: normalise over dims `axis..rank-1` (ONNX LayerNormalization).

    gamma and beta broadcast (NumPy-style) to the normalised shape `x.shape[axis:]`.
    """

    def __init__(
        self, x: SSAValue, gamma: SSAValue, beta: SSAValue, *, axis: int = -1, eps: float = 1e-5
    ):
        super().__init__(
            operands=[x, gamma, beta],
            properties={"axis": i64_attr(axis), "eps": FloatAttr(eps, f32)},
        )

    def normalized_axis(self) -> int:
        return normalize_axis(self.axis.value.data, self.normalized_input_type().get_num_dims())

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        region = tuple(x.get_shape()[self.normalized_axis():])
        for what, value in self.affine_operands():
            shape = tuple(tensor_type(value).get_shape())
            require(
                broadcasts_to(shape, region),
                self,
                lambda: f"{what} shape {fmt_shape(shape)} does not broadcast to the normalised "
                f"shape {fmt_shape(region)}",
            )
        return [x]


AXIS_NORM_FORMAT = "$x `,` $gamma `,` $beta `axis` `=` $axis `eps` `=` $eps " + FUNCTIONAL


@irdl_op_definition
class LayerNormOp(AxisNormOperation):
    """`(x - mean) / sqrt(var + eps) * gamma + beta` over dims `axis..` (`LayerNorm{axis, eps}`).

    The variance is the biased (population) one, as in ONNX and PyTorch.
    """

    name = "mir.layer_norm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = AXIS_NORM_FORMAT


@irdl_op_definition
class RmsNormOp(AxisNormOperation):
    """`x * rsqrt(mean(x^2) + eps) * gamma + beta` over dims `axis..` (`RmsNorm{axis, eps}`).

    beta is added as RLX's CPU kernel does (its MLX backend ignores it).
    """

    name = "mir.rms_norm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = AXIS_NORM_FORMAT

    def __init__(
        self, x: SSAValue, gamma: SSAValue, beta: SSAValue, *, axis: int = -1, eps: float = 1e-6
    ):
        """As layer_norm, with RLX's smaller default eps."""
        super().__init__(x, gamma, beta, axis=axis, eps=eps)


@irdl_op_definition
class GroupNormOp(NormOperation):
    """Normalises `num_groups` channel groups of `x[N, C, ...]` (`GroupNorm{num_groups, eps}`).

    Statistics cover the group's channels and all spatial positions; gamma and beta
    are per channel (`[C]`), as ONNX GroupNormalization since opset 21. With `?`
    channels, a run-time channel count not divisible by `num_groups` is a run-time error.
    """

    name = "mir.group_norm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    num_groups = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = (
        "$x `,` $gamma `,` $beta `num_groups` `=` $num_groups `eps` `=` $eps " + FUNCTIONAL
    )

    def __init__(
        self, x: SSAValue, gamma: SSAValue, beta: SSAValue, *, num_groups: int, eps: float = 1e-5
    ):
        super().__init__(
            operands=[x, gamma, beta],
            properties={"num_groups": i64_attr(num_groups), "eps": FloatAttr(eps, f32)},
        )

    def check_attributes(self) -> None:
        super().check_attributes()
        groups = self.num_groups.value.data
        require(groups >= 1, self, lambda: f"num_groups must be at least 1, got {groups}")

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        shape = x.get_shape()
        require(
            len(shape) >= 3,
            self,
            lambda: f"operand must have rank at least 3 ([N, C, spatial...]), got {fmt_shape(shape)}",
        )
        channels, groups = shape[1], self.num_groups.value.data
        require(
            channels == DYNAMIC or channels % groups == 0,
            self,
            lambda: f"{channels} channels do not split into {groups} groups",
        )
        for what, value in self.affine_operands():
            s = tensor_type(value).get_shape()
            require(
                len(s) == 1 and dims_match(s[0], channels),
                self,
                lambda: f"{what} must have shape [C] = {fmt_shape([channels])}, got {fmt_shape(s)}",
            )
        return [x]


@irdl_op_definition
class BatchNormInferenceOp(NormOperation):
    """`(x - mean) / sqrt(var + eps) * gamma + beta` per channel of `x[N, C, ...]`
    (`BatchNormInference{eps}`), with given statistics: PyTorch's `batch_norm` in eval mode.

    gamma, beta, mean and var are `[C]` and share x's element type. Its precision
    class is compute (RLX classifies it by its fallback arm).
    """

    name = "mir.batch_norm_inference"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    mean = operand_def(TensorType)
    var = operand_def(TensorType)
    result = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $gamma `,` $beta `,` $mean `,` $var `eps` `=` $eps " + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        mean: SSAValue,
        var: SSAValue,
        *,
        eps: float = 1e-5,
    ):
        super().__init__(operands=[x, gamma, beta, mean, var], properties={"eps": FloatAttr(eps, f32)})

    def affine_operands(self) -> tuple[tuple[str, SSAValue], ...]:
        return (("gamma", self.gamma), ("beta", self.beta), ("mean", self.mean), ("var", self.var))

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        shape = x.get_shape()
        require(
            len(shape) >= 2,
            self,
            lambda: f"operand must have rank at least 2 ([N, C, spatial...]), got {fmt_shape(shape)}",
        )
        for what, value in self.affine_operands():
            s = tensor_type(value).get_shape()
            require(
                len(s) == 1 and dims_match(s[0], shape[1]),
                self,
                lambda: f"{what} must have shape [C] = {fmt_shape([shape[1]])}, got {fmt_shape(s)}",
            )
        return [x]


OPS = [LayerNormOp, RmsNormOp, GroupNormOp, BatchNormInferenceOp]
ATTRIBUTES: list[type] = []
