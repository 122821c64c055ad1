"""HIR convolution block: the causal depthwise Conv1d of Conformer-style models."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    i64_attr,
    refine_dim,
    require,
    require_positive,
    require_rank,
)
from rlx_xdsl.dialects.hir.base import (
    HirOperation,
    float_operands,
    label_attributes,
    require_one_dynamic,
    require_shape,
)
from rlx_xdsl.dialects.traits import COMPUTE
from rlx_xdsl.shapes import DYNAMIC, tensor


@irdl_op_definition
class DepthwiseConv1dCausalOp(HirOperation):
    """A causal depthwise convolution over the sequence of `x[B, S, C]` (`HirOp::DepthwiseConv1dCausal`).

    `out[b, s, c] = sum_j w[c, 0, 0, j] * padded[b, s + j, c]` where `padded` is
    `left_pad[B, K-1, C]` followed by x along the sequence (the left context: zeros
    at the start of a stream, the previous chunk's tail when streaming). Both
    policies lower it to `concat` -> `transpose` -> `reshape` -> a grouped `mir.conv`
    (groups = C, kernel `[1, K]`) -> `reshape` -> `transpose`.
    """

    name = "hir.depthwise_conv1d_causal"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    left_pad = operand_def(TensorType)
    kernel_size = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $left_pad `kernel_size` `=` $kernel_size " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "depthwise_conv1d_causal"

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        left_pad: SSAValue,
        *,
        kernel_size: int,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, w, left_pad],
            properties={"kernel_size": i64_attr(kernel_size)},
            attributes=label_attributes(label),
        )

    def check_attributes(self) -> None:
        require_positive(self, kernel_size=self.kernel_size.value.data)

    def infer_result_types(self) -> Sequence[Attribute]:
        types = float_operands(self, {"x": self.x, "w": self.w, "left_pad": self.left_pad})
        x = types["x"]
        require_rank(self, x, 3, "x")
        batch, seq, channels = x.get_shape()
        require(channels != DYNAMIC, self, "x must have a static channel dim (the conv's group count)")
        kernel = self.kernel_size.value.data
        require_shape(self, types["w"], (channels, 1, 1, kernel), "w")
        require_shape(self, types["left_pad"], (batch, kernel - 1, channels), "left_pad")
        batch = refine_dim(batch, types["left_pad"].get_shape()[0])
        require_one_dynamic(self, (batch, seq, channels), "x")
        return [tensor(x.element_type, (batch, seq, channels))]


OPS = [DepthwiseConv1dCausalOp]
