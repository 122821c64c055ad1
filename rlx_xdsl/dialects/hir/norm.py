"""HIR normalisation blocks: `rms_norm` and `residual_rms_norm` over the last axis.

RLX's HIR norms always normalise the last axis (`RmsNorm{axis: -1}`); gamma and
beta broadcast to it, as for `mir.rms_norm`, and share x's float dtype.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import Float32Type, FloatAttr, TensorType, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import FUNCTIONAL, require, tensor_type
from rlx_xdsl.dialects.hir.base import HirOperation, label_attributes
from rlx_xdsl.dialects.mir.norm import NormOperation
from rlx_xdsl.dialects.traits import REDUCTION
from rlx_xdsl.shapes import (
    ShapeError,
    broadcast_shapes,
    broadcasts_to,
    fmt_shape,
    tensor,
)

LLAMA_EPS = 1e-6
"""The default epsilon of the HIR norms (LLaMA's)."""


class LastAxisNormOperation(NormOperation, HirOperation):
    """The HIR norms: `NormOperation`'s checks, normalising the last axis."""

    def check_affine(self, shape: Sequence[int]) -> None:
        """gamma and beta broadcast to the last dim of `shape`."""
        region = tuple(shape[-1:])
        for what, value in (("gamma", self.gamma), ("beta", self.beta)):
            affine = tuple(tensor_type(value).get_shape())
            require(
                broadcasts_to(affine, region),
                self,
                lambda: f"{what} shape {fmt_shape(affine)} does not broadcast to the normalised "
                f"shape {fmt_shape(region)}",
            )


@irdl_op_definition
class RmsNormOp(LastAxisNormOperation):
    """`x * rsqrt(mean(x^2, -1) + eps) * gamma + beta` (`HirOp::RmsNorm`); lowers to `mir.rms_norm`."""

    name = "hir.rms_norm"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$x `,` $gamma `,` $beta `eps` `=` $eps " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "rms_norm"

    def __init__(
        self,
        x: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        *,
        eps: float = LLAMA_EPS,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, gamma, beta],
            properties={"eps": FloatAttr(eps, f32)},
            attributes=label_attributes(label),
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        require(x.get_num_dims() >= 1, self, "x must have rank >= 1, got []")
        self.check_affine(x.get_shape())
        return [x]


@irdl_op_definition
class ResidualRmsNormOp(LastAxisNormOperation):
    """`rms_norm(x + residual)` over the last axis (`HirOp::ResidualRmsNorm`).

    `direct` lowers to `mir.fused_residual_rms_norm`; `fusable` to `mir.add` then
    `mir.rms_norm`. The sum broadcasts x and residual NumPy-style.
    """

    name = "hir.residual_rms_norm"
    x = operand_def(TensorType)
    residual = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$x `,` $residual `,` $gamma `,` $beta `eps` `=` $eps " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "residual_rms_norm"

    def __init__(
        self,
        x: SSAValue,
        residual: SSAValue,
        gamma: SSAValue,
        beta: SSAValue,
        *,
        eps: float = LLAMA_EPS,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, residual, gamma, beta],
            properties={"eps": FloatAttr(eps, f32)},
            attributes=label_attributes(label),
        )

    def affine_operands(self) -> tuple[tuple[str, SSAValue], ...]:
        # The residual joins x's dtype check with gamma and beta.
        return (("residual", self.residual), *super().affine_operands())

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        residual = tensor_type(self.residual)
        try:
            shape = broadcast_shapes(x.get_shape(), residual.get_shape())
        except ShapeError:
            raise ShapeError(
                f"x shape {fmt_shape(x.get_shape())} and residual shape "
                f"{fmt_shape(residual.get_shape())} do not broadcast"
            ) from None
        require(len(shape) >= 1, self, "x must have rank >= 1, got []")
        self.check_affine(shape)
        return [tensor(x.element_type, shape)]


OPS = [RmsNormOp, ResidualRmsNormOp]
