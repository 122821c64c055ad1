"""HIR projection blocks: linear layers, a shared-input pair and the SwiGLU feed-forward.

Activations are `x[..., K]`, weights are matrices `w[K, N]` (what RLX's model
builders use), and a block's operands share one float dtype. A bias broadcasts
NumPy-style to the projection `[..., N]` without changing its shape.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import FUNCTIONAL, require
from rlx_xdsl.dialects.hir.base import (
    HirOperation,
    float_operands,
    label_attributes,
    projection,
    require_shape,
)
from rlx_xdsl.dialects.mir.attrs import Activation, ActivationAttr
from rlx_xdsl.dialects.traits import COMPUTE
from rlx_xdsl.shapes import broadcast_shapes, broadcasts_to, fmt_shape, tensor


def _activation_attr(activation: Activation | str | None) -> ActivationAttr | None:
    return None if activation is None else ActivationAttr(Activation(activation))


class LinearOperation(HirOperation):
    """`act(x @ w (+ bias))`: what `hir.linear` and `hir.linear_fused` share."""

    def infer_result_types(self) -> Sequence[Attribute]:
        values = {"x": self.x, "w": self.w}
        if self.bias is not None:
            values["bias"] = self.bias
        types = float_operands(self, values)
        shape = projection(self, types["x"], types["w"], "w")
        if self.bias is not None:
            bias = types["bias"].get_shape()
            # Nor may it refine a `?` of the projection: both lowerings must give one type.
            require(
                broadcasts_to(bias, shape) and list(broadcast_shapes(shape, bias)) == shape,
                self,
                lambda: f"bias shape {fmt_shape(bias)} does not broadcast to the projection {fmt_shape(shape)}",
            )
        return [tensor(types["x"].element_type, shape)]

    @property
    def kind(self) -> Activation | None:
        return None if self.activation is None else self.activation.data


@irdl_op_definition
class LinearOp(LinearOperation):
    """A dense layer `act(x @ w + bias)` with optional bias and activation (`HirOp::Linear`).

    `direct` lowers a layer with a bias to `mir.fused_matmul_bias_act`; without a
    bias, and under `fusable`, it becomes `mir.matmul` (+ `mir.add`) (+ the activation op).
    """

    name = "hir.linear"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = opt_operand_def(TensorType)
    activation = opt_prop_def(ActivationAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w (`,` $bias^)? (`activation` `=` $activation^)? " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "linear"

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue | None = None,
        *,
        activation: Activation | str | None = None,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, w, bias],
            properties={"activation": _activation_attr(activation)},
            attributes=label_attributes(label),
        )


@irdl_op_definition
class LinearFusedOp(LinearOperation):
    """`act(x @ w + bias)` that always lowers to `mir.fused_matmul_bias_act` (`HirOp::LinearFused`)."""

    name = "hir.linear_fused"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = operand_def(TensorType)
    activation = opt_prop_def(ActivationAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $bias (`activation` `=` $activation^)? " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "linear_fused"

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue,
        *,
        activation: Activation | str | None = None,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, w, bias],
            properties={"activation": _activation_attr(activation)},
            attributes=label_attributes(label),
        )


@irdl_op_definition
class SharedLinearPairOp(HirOperation):
    """Two projections of one input, `(x @ w1, x @ w2)` (`HirOp::SharedLinearPair`).

    RLX models the pair as two nodes with a `slot` and memoises the matmuls; here
    it is one op with two results. Both lower to `mir.matmul`, labelled
    `<label>[0]` and `<label>[1]`.
    """

    name = "hir.shared_linear_pair"
    x = operand_def(TensorType)
    w1 = operand_def(TensorType)
    w2 = operand_def(TensorType)
    first = result_def(TensorType)
    second = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w1 `,` $w2 " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "shared_linear_pair"

    def __init__(self, x: SSAValue, w1: SSAValue, w2: SSAValue, *, label: str | None = None):
        super().__init__(operands=[x, w1, w2], attributes=label_attributes(label))

    def infer_result_types(self) -> Sequence[Attribute]:
        types = float_operands(self, {"x": self.x, "w1": self.w1, "w2": self.w2})
        et = types["x"].element_type
        return [tensor(et, projection(self, types["x"], types[w], w)) for w in ("w1", "w2")]


@irdl_op_definition
class SwigluOp(HirOperation):
    """The SwiGLU feed-forward `(silu(x @ gate_w) * (x @ up_w)) @ down_w` (`HirOp::SwiGLU`).

    up_w and gate_w are `[K, F]`, down_w is `[F, N]`. `direct` concatenates
    `[up_w, gate_w]` into one projection feeding `mir.fused_swiglu`; `fusable`
    emits the nine-node chain the fusion passes recognise.
    """

    name = "hir.swiglu"
    x = operand_def(TensorType)
    up_w = operand_def(TensorType)
    gate_w = operand_def(TensorType)
    down_w = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $up_w `,` $gate_w `,` $down_w " + FUNCTIONAL
    DEFAULT_LABEL: ClassVar[str] = "swiglu_ffn"

    def __init__(
        self,
        x: SSAValue,
        up_w: SSAValue,
        gate_w: SSAValue,
        down_w: SSAValue,
        *,
        label: str | None = None,
    ):
        super().__init__(operands=[x, up_w, gate_w, down_w], attributes=label_attributes(label))

    def infer_result_types(self) -> Sequence[Attribute]:
        types = float_operands(
            self, {"x": self.x, "up_w": self.up_w, "gate_w": self.gate_w, "down_w": self.down_w}
        )
        hidden = projection(self, types["x"], types["up_w"], "up_w")
        require_shape(self, types["gate_w"], types["up_w"].get_shape(), "gate_w")
        gated = tensor(types["x"].element_type, hidden)
        out = projection(self, gated, types["down_w"], "down_w", "the gated hidden layer")
        return [tensor(types["x"].element_type, out)]


OPS = [LinearOp, LinearFusedOp, SharedLinearPairOp, SwigluOp]
