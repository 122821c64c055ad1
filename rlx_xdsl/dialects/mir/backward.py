"""MIR backward kernels: the closed-form gradients reverse-mode autodiff emits.

Each op computes the gradient of one forward op with respect to one of its
operands, from the incoming cotangent `dy` (the gradient of the forward result)
and the forward operands it needs. Like RLX's kernels they save nothing from the
forward pass: statistics (mean, variance, softmax, argmax) are recomputed from `x`.
One op per gradient: attention has three (`wrt = query | key | value`), the
norms one per differentiated operand.

Operand order and properties are a stable contract for autodiff (see
`docs/mir.md`): forward operands first, in the forward op's order, then `dy`
(`rope_backward`, `cumsum_backward`, `gather_backward` and the conv input
gradient take `dy` first, as RLX's do). Properties are those of the forward op,
plus what the gradient's shape cannot be inferred from (`input_size`, `dim_size`).
Operands a gradient does not read are left out (RLX passes β to every RmsNorm and
GroupNorm gradient). `stop_gradient` is the identity that autodiff does not
differentiate through. `scatter_add` needs no kernel: the gradient of its updates
is a `mir.gather` of dy at the same indices (RLX's VJP composes it that way).

The gradient of a forward op whose operand broadcasts (a norm's gamma, rope's
cos/sin) has the broadcast shape; reducing it back is autodiff's `unbroadcast`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    UnitAttr,
    f32,
)
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    i64_array,
    i64_attr,
    refine_dim,
    require,
    require_float,
    require_index_type,
    require_non_negative,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attention import (
    AttentionOperation,
    MaskKind,
    MaskKindAttr,
    RopeOperation,
)
from rlx_xdsl.dialects.mir.attrs import (
    Activation,
    ActivationAttr,
    ReduceKind,
    ReduceKindAttr,
)
from rlx_xdsl.dialects.mir.conv import CONV_PROPS, POOL_PROPS, ConvOperation, PoolOperation
from rlx_xdsl.dialects.mir.reduction import unit_flag
from rlx_xdsl.dialects.traits import (
    COMPUTE,
    DATA_MOVEMENT,
    ELEMENTWISE,
    REDUCTION,
    Elementwise,
    OperandRoles,
    Role,
    ViewOf,
    WritesInPlace,
)
from rlx_xdsl.shapes import (
    DYNAMIC,
    broadcasts_to,
    dims_match,
    fmt_shape,
    normalize_axis,
    tensor,
)


class GradientOperation(RlxOperation):
    """What every backward op shares: checking the cotangent against the forward result."""

    def cotangent(self, expected: TensorType, dy: SSAValue | None = None, what: str = "dy") -> TensorType:
        """`dy` has the forward result's shape and dtype; returns that type, dims refined by both."""
        dy_type = tensor_type(self.dy if dy is None else dy)
        shape, dy_shape = expected.get_shape(), dy_type.get_shape()
        require(
            len(shape) == len(dy_shape) and all(map(dims_match, shape, dy_shape)),
            self,
            lambda: f"{what} shape {fmt_shape(dy_shape)} differs from the forward result shape {fmt_shape(shape)}",
        )
        require(
            dy_type.element_type == expected.element_type,
            self,
            lambda: f"{what} element type {dy_type.element_type} differs from the forward result's "
            f"{expected.element_type}",
        )
        return tensor(expected.element_type, [refine_dim(a, b) for a, b in zip(shape, dy_shape)])


# Activations ----------------------------------------------------------------------


class ActivationGradientOperation(GradientOperation):
    """`dx = dy * f'(x)`: x is floating point and dy has x's type."""

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x, "x")
        return [self.cotangent(x)]


@irdl_op_definition
class ReluBackwardOp(ActivationGradientOperation):
    """`dy` where `x > 0`, else 0 (`ReluBackward`; the derivative at 0 is taken as 0)."""

    name = "mir.relu_backward"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = "$x `,` $dy " + FUNCTIONAL

    def __init__(self, x: SSAValue, dy: SSAValue):
        super().__init__(operands=[x, dy])


@irdl_op_definition
class ActivationBackwardOp(ActivationGradientOperation):
    """`dy * f'(x)` for the activation `kind` (`ActivationBackward{kind}`).

    Derivatives are the exact ones (RLX's lowering uses tanh's for `tan` and the
    tanh approximation's for exact `gelu`; both are fixed here). Where `f` is not
    differentiable a convention applies: `relu` and `abs` take 0 at 0; `sqrt` and
    `rsqrt` give 0 for `x <= 0` (as RLX masks them); `round` passes `dy` through
    (RLX's straight-through estimator; the true derivative is 0 almost everywhere).
    """

    name = "mir.activation_backward"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(ActivationAttr)
    traits = traits_def(Pure(), Elementwise(), ELEMENTWISE, WritesInPlace())
    assembly_format = "$kind $x `,` $dy " + FUNCTIONAL

    def __init__(self, x: SSAValue, dy: SSAValue, *, kind: str | Activation):
        super().__init__(operands=[x, dy], properties={"kind": ActivationAttr(Activation(kind))})

    @property
    def activation(self) -> Activation:
        return self.kind.data


# Normalisations ---------------------------------------------------------------------


class NormGradientOperation(GradientOperation):
    """Checks shared by the norm gradients: eps (for the ops that have it), a float `x`
    and operands of x's dtype."""

    def check_attributes(self) -> None:
        eps = getattr(self, "eps", None)
        if eps is not None:
            require(eps.value.data > 0, self, lambda: f"eps must be positive, got {eps.value.data}")

    def float_operand(self, value: SSAValue, what: str) -> TensorType:
        t = tensor_type(value)
        require_float(self, t, what)
        return t

    def same_dtype(self, x: TensorType, **others: SSAValue) -> None:
        require_same_element_type(
            self,
            x,
            {what: tensor_type(v) for what, v in others.items()},
            "{what} element type {actual} differs from the operand's {expected}",
        )


class AxisNormGradientOperation(NormGradientOperation):
    """layer_norm and rms_norm gradients: statistics over dims `axis..rank-1`.

    gamma broadcasts (NumPy-style) to the normalised shape `x.shape[axis:]`; the
    gamma and beta gradients have that shape, summed over the leading dims.
    """

    def normalized_axis(self, rank: int) -> int:
        return normalize_axis(self.axis.value.data, rank)

    def check_gamma(self, x: TensorType, gamma: SSAValue) -> None:
        region = tuple(x.get_shape()[self.normalized_axis(x.get_num_dims()) :])
        shape = tuple(tensor_type(gamma).get_shape())
        require(
            broadcasts_to(shape, region),
            self,
            lambda: f"gamma shape {fmt_shape(shape)} does not broadcast to the normalised shape {fmt_shape(region)}",
        )

    def input_gradient(self) -> list[Attribute]:
        """`[x, gamma, dy] -> dx` (x's type)."""
        x = self.float_operand(self.x, "x")
        self.same_dtype(x, gamma=self.gamma)
        self.check_gamma(x, self.gamma)
        return [self.cotangent(x)]

    def parameter_gradient(self, dy_only: bool = False) -> list[Attribute]:
        """`[x, dy]` (or `[dy]`) -> the gradient of gamma or beta, shaped `x.shape[axis:]`."""
        forward = self.float_operand(self.dy if dy_only else self.x, "dy" if dy_only else "x")
        dy = forward if dy_only else self.cotangent(forward)
        return [tensor(dy.element_type, dy.get_shape()[self.normalized_axis(dy.get_num_dims()) :])]


AXIS_NORM_PROPS = "`axis` `=` $axis `eps` `=` $eps "


def _axis_norm_props(axis: int, eps: float) -> dict[str, Attribute]:
    return {"axis": i64_attr(axis), "eps": FloatAttr(eps, f32)}


@irdl_op_definition
class LayerNormBackwardInputOp(AxisNormGradientOperation):
    """dx of `layer_norm` (`LayerNormBackwardInput{axis, eps}`): with `g = dy * gamma`,
    `dx = (g - mean(g) - x_hat * mean(g * x_hat)) / sqrt(var + eps)` over the normalised dims."""

    name = "mir.layer_norm_backward_input"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$x `,` $gamma `,` $dy " + AXIS_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, gamma: SSAValue, dy: SSAValue, *, axis: int = -1, eps: float = 1e-5):
        super().__init__(operands=[x, gamma, dy], properties=_axis_norm_props(axis, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        return self.input_gradient()


@irdl_op_definition
class LayerNormBackwardGammaOp(AxisNormGradientOperation):
    """dgamma of `layer_norm` (`LayerNormBackwardGamma{axis, eps}`): `sum(dy * x_hat)` over
    the leading dims, shaped `x.shape[axis:]`. (dbeta is a plain sum of dy.)"""

    name = "mir.layer_norm_backward_gamma"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$x `,` $dy " + AXIS_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, dy: SSAValue, *, axis: int = -1, eps: float = 1e-5):
        super().__init__(operands=[x, dy], properties=_axis_norm_props(axis, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        return self.parameter_gradient()


@irdl_op_definition
class RmsNormBackwardInputOp(AxisNormGradientOperation):
    """dx of `rms_norm` (`RmsNormBackwardInput{axis, eps}`): with `r = rsqrt(mean(x^2) + eps)`,
    `x_hat = x r` and `g = dy * gamma`, `dx = r (g - x_hat * mean(g * x_hat))`."""

    name = "mir.rms_norm_backward_input"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $gamma `,` $dy " + AXIS_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, gamma: SSAValue, dy: SSAValue, *, axis: int = -1, eps: float = 1e-6):
        super().__init__(operands=[x, gamma, dy], properties=_axis_norm_props(axis, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        return self.input_gradient()


@irdl_op_definition
class RmsNormBackwardGammaOp(AxisNormGradientOperation):
    """dgamma of `rms_norm` (`RmsNormBackwardGamma{axis, eps}`): `sum(dy * x_hat)` over the
    leading dims, shaped `x.shape[axis:]`."""

    name = "mir.rms_norm_backward_gamma"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $dy " + AXIS_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, dy: SSAValue, *, axis: int = -1, eps: float = 1e-6):
        super().__init__(operands=[x, dy], properties=_axis_norm_props(axis, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        return self.parameter_gradient()


@irdl_op_definition
class RmsNormBackwardBetaOp(AxisNormGradientOperation):
    """dbeta of `rms_norm` (`RmsNormBackwardBeta{axis}`): `sum(dy)` over the leading dims,
    shaped `dy.shape[axis:]`. It reads neither x nor eps."""

    name = "mir.rms_norm_backward_beta"
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$dy `axis` `=` $axis " + FUNCTIONAL

    def __init__(self, dy: SSAValue, *, axis: int = -1):
        super().__init__(operands=[dy], properties={"axis": i64_attr(axis)})

    def infer_result_types(self) -> Sequence[Attribute]:
        return self.parameter_gradient(dy_only=True)


class GroupNormGradientOperation(NormGradientOperation):
    """group_norm gradients: `x[N, C, spatial...]` in `num_groups` channel groups; gamma is `[C]`."""

    def check_attributes(self) -> None:
        super().check_attributes()
        groups = getattr(self, "num_groups", None)
        if groups is not None:
            require(groups.value.data >= 1, self, lambda: f"num_groups must be at least 1, got {groups.value.data}")

    def channels_of(self, x: TensorType) -> int:
        """The channel dim of `x[N, C, spatial...]`, which the group count must divide."""
        shape = x.get_shape()
        require(
            len(shape) >= 3,
            self,
            lambda: f"operand must have rank at least 3 ([N, C, spatial...]), got {fmt_shape(shape)}",
        )
        channels = shape[1]
        groups = getattr(self, "num_groups", None)
        if groups is not None:
            require(
                channels == DYNAMIC or channels % groups.value.data == 0,
                self,
                lambda: f"{channels} channels do not split into {groups.value.data} groups",
            )
        return channels

    def per_channel(self, x: TensorType) -> TensorType:
        return tensor(x.element_type, [self.channels_of(x)])


GROUP_NORM_PROPS = "`num_groups` `=` $num_groups `eps` `=` $eps "


def _group_norm_props(num_groups: int, eps: float) -> dict[str, Attribute]:
    return {"num_groups": i64_attr(num_groups), "eps": FloatAttr(eps, f32)}


@irdl_op_definition
class GroupNormBackwardInputOp(GroupNormGradientOperation):
    """dx of `group_norm` (`GroupNormBackwardInput{num_groups, eps}`): the layer-norm input
    gradient of each (sample, group) block, with `g = dy * gamma[c]`."""

    name = "mir.group_norm_backward_input"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    num_groups = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $gamma `,` $dy " + GROUP_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, gamma: SSAValue, dy: SSAValue, *, num_groups: int, eps: float = 1e-5):
        super().__init__(operands=[x, gamma, dy], properties=_group_norm_props(num_groups, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.float_operand(self.x, "x")
        self.same_dtype(x, gamma=self.gamma)
        channels = self.channels_of(x)
        s = tensor_type(self.gamma).get_shape()
        require(
            len(s) == 1 and dims_match(s[0], channels),
            self,
            lambda: f"gamma must have shape [C] = {fmt_shape([channels])}, got {fmt_shape(s)}",
        )
        return [self.cotangent(x)]


@irdl_op_definition
class GroupNormBackwardGammaOp(GroupNormGradientOperation):
    """dgamma of `group_norm` (`GroupNormBackwardGamma{num_groups, eps}`): `sum(dy * x_hat)`
    over every dim but the channels, shaped `[C]`."""

    name = "mir.group_norm_backward_gamma"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    num_groups = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $dy " + GROUP_NORM_PROPS + FUNCTIONAL

    def __init__(self, x: SSAValue, dy: SSAValue, *, num_groups: int, eps: float = 1e-5):
        super().__init__(operands=[x, dy], properties=_group_norm_props(num_groups, eps))

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.float_operand(self.x, "x")
        return [self.per_channel(self.cotangent(x))]


@irdl_op_definition
class GroupNormBackwardBetaOp(GroupNormGradientOperation):
    """dbeta of `group_norm` (`GroupNormBackwardBeta`): `sum(dy)` over every dim but the
    channels, shaped `[C]`. It reads neither x nor the group count."""

    name = "mir.group_norm_backward_beta"
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$dy " + FUNCTIONAL

    def __init__(self, dy: SSAValue):
        super().__init__(operands=[dy])

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.per_channel(self.float_operand(self.dy, "dy"))]


# Rope and attention -----------------------------------------------------------------


@irdl_op_definition
class RopeBackwardOp(RopeOperation):
    """dx of `rope` (`RopeBackward{head_dim, n_rot}`): the inverse rotation of dy,
    `dx[i] = dy[i] cos + dy[i+h] sin`, `dx[i+h] = dy[i+h] cos - dy[i] sin`; the
    unrotated dims pass dy through."""

    name = "mir.rope_backward"
    dy = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    result = result_def(TensorType)
    head_dim = prop_def(IntegerAttr[I64])
    n_rot = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$dy `,` $cos `,` $sin `head_dim` `=` $head_dim `n_rot` `=` $n_rot " + FUNCTIONAL

    def __init__(self, dy: SSAValue, cos: SSAValue, sin: SSAValue, *, head_dim: int, n_rot: int):
        super().__init__(
            operands=[dy, cos, sin],
            properties={"head_dim": i64_attr(head_dim), "n_rot": i64_attr(n_rot)},
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.check_rotated(self.dy, "dy")]


class AttentionWrt(StrEnum):
    """Which attention operand an `attention_backward` differentiates (`AttentionBwdWrt`)."""

    QUERY = "query"
    KEY = "key"
    VALUE = "value"


@irdl_attr_definition
class AttentionWrtAttr(EnumAttribute[AttentionWrt], SpacedOpaqueSyntaxAttribute):
    """`#mir<attention_wrt key>`, or bare `key` in the op."""

    name = "mir.attention_wrt"


@irdl_op_definition
class AttentionBackwardOp(AttentionOperation, GradientOperation):
    """The gradient of `mir.attention` with respect to q, k or v (`AttentionBackward{wrt}`).

    Operands are the forward's q, k, v, the cotangent `dy` (q's shape), then the
    forward's mask when its kind takes one. Every forward property is honoured:
    masks, sliding window, score scale, logit soft-cap and grouped KV heads (the
    k and v gradients sum over the query heads sharing a KV head, so they have
    k's shape). Rows whose keys are all masked contribute nothing.
    """

    name = "mir.attention_backward"
    q = operand_def(TensorType)
    k = operand_def(TensorType)
    v = operand_def(TensorType)
    dy = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    result = result_def(TensorType)
    wrt = prop_def(AttentionWrtAttr)
    num_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    score_scale = opt_prop_def(FloatAttr[Float32Type])
    attn_logit_softcap = opt_prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(mask=Role.MASK))
    assembly_format = (
        "$wrt $q `,` $k `,` $v `,` $dy (`,` $mask^)? `num_heads` `=` $num_heads `head_dim` `=` $head_dim "
        "`mask_kind` `=` $mask_kind (`window` `=` $window^)? "
        "(`score_scale` `=` $score_scale^)? (`attn_logit_softcap` `=` $attn_logit_softcap^)? " + FUNCTIONAL
    )

    def __init__(
        self,
        q: SSAValue,
        k: SSAValue,
        v: SSAValue,
        dy: SSAValue,
        mask: SSAValue | None = None,
        *,
        wrt: str | AttentionWrt,
        num_heads: int,
        head_dim: int,
        mask_kind: str | MaskKind = MaskKind.NONE,
        window: int | None = None,
        score_scale: float | None = None,
        attn_logit_softcap: float | None = None,
    ):
        def opt_f32(value: float | None) -> FloatAttr | None:
            return None if value is None else FloatAttr(value, f32)

        super().__init__(
            operands=[q, k, v, dy, mask],
            properties={
                "wrt": AttentionWrtAttr(AttentionWrt(wrt)),
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": None if window is None else i64_attr(window),
                "score_scale": opt_f32(score_scale),
                "attn_logit_softcap": opt_f32(attn_logit_softcap),
            },
        )

    @property
    def with_respect_to(self) -> AttentionWrt:
        return self.wrt.data

    def infer_result_types(self) -> Sequence[Attribute]:
        q = self.check_operands()
        batch, _, sq, _ = q.get_shape()
        out = tensor(q.element_type, (batch, self.num_heads.value.data, sq, self.head_dim.value.data))
        dy = self.cotangent(out)
        if self.with_respect_to == AttentionWrt.QUERY:
            return [dy]
        kv = tensor_type(self.k if self.with_respect_to == AttentionWrt.KEY else self.v)
        kv_batch, *rest = kv.get_shape()
        return [tensor(kv.element_type, [refine_dim(kv_batch, dy.get_shape()[0]), *rest])]


# Convolution and pooling ------------------------------------------------------------


class ConvGradientOperation(ConvOperation, GradientOperation):
    """The conv gradients: the forward's window, dilation and groups, and its shape rules."""

    def check_float_pair(self, first: TensorType, second: TensorType, names: tuple[str, str]) -> None:
        require_rank(self, first, 4, names[0])
        require_rank(self, second, 4, names[1])
        require_float(self, first, names[0])
        require_same_element_type(self, first, {names[1]: second})

    def forward_output(self, x: TensorType, w_shape: Sequence[int]) -> TensorType:
        """The forward conv's result type for input `x` and weight shape `w_shape`."""
        w = tensor(x.element_type, w_shape)
        self.check_channels(x, w)
        self.check_kernel(w)
        return tensor(x.element_type, (x.get_shape()[0], w_shape[0], *self.spatial_output(x)))


@irdl_op_definition
class ConvBackwardInputOp(ConvGradientOperation):
    """dx of `conv` (`Conv2dBackwardInput`): the transposed convolution of dy with w.

    Operands are `dy [N, Cout, Ho, Wo]` and `w`; the forward input's spatial size
    is the `input_size` property (with a stride above 1 several sizes give the
    same `Ho`, so it cannot be inferred). Input rows the forward never read
    (the stride's remainder) get zero gradient. A 1-D convolution is the H = 1 case.
    Each element is a sum over real products `dy · w` only: the zeros a stride
    inserts and the padding never multiply a weight (a ±inf weight gives no NaN there).
    """

    name = "mir.conv_backward_input"
    dy = operand_def(TensorType)
    w = operand_def(TensorType)
    result = result_def(TensorType)
    input_size = prop_def(I64_ARRAY)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    dilation = prop_def(I64_ARRAY)
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$dy `,` $w `input_size` `=` $input_size " + CONV_PROPS + FUNCTIONAL
    PAIR_MINIMUMS: ClassVar[dict[str, int]] = {**ConvOperation.PAIR_MINIMUMS, "input_size": 1}

    def __init__(
        self,
        dy: SSAValue,
        w: SSAValue,
        *,
        input_size: Sequence[int],
        kernel_size: Sequence[int],
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        super().__init__(
            operands=[dy, w],
            properties={
                "input_size": i64_array(input_size),
                **self.conv_properties(kernel_size, stride, padding, dilation, groups),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        dy, w = tensor_type(self.dy), tensor_type(self.w)
        self.check_float_pair(dy, w, ("dy", "w"))
        batch, cout = dy.get_shape()[:2]
        cin = w.get_shape()[1] * self.groups.value.data if w.get_shape()[1] != DYNAMIC else DYNAMIC
        x = tensor(dy.element_type, (batch, cin, *self.pair("input_size")))
        expected = self.forward_output(x, (refine_dim(w.get_shape()[0], cout), *w.get_shape()[1:]))
        self.cotangent(expected)
        return [x]


@irdl_op_definition
class ConvBackwardWeightOp(ConvGradientOperation):
    """dw of `conv` (`Conv2dBackwardWeight`): the correlation of the forward input x with dy,
    summed over the batch, shaped `[Cout, Cin / groups, kh, kw]`."""

    name = "mir.conv_backward_weight"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    dilation = prop_def(I64_ARRAY)
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $dy " + CONV_PROPS + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        dy: SSAValue,
        *,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        super().__init__(
            operands=[x, dy],
            properties=self.conv_properties(kernel_size, stride, padding, dilation, groups),
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        x, dy = tensor_type(self.x), tensor_type(self.dy)
        self.check_float_pair(x, dy, ("x", "dy"))
        groups = self.groups.value.data
        cin = x.get_shape()[1]
        w_shape = (dy.get_shape()[1], cin // groups if cin != DYNAMIC else DYNAMIC, *self.pair("kernel_size"))
        self.cotangent(self.forward_output(x, w_shape))
        return [tensor(x.element_type, w_shape)]


@irdl_op_definition
class PoolBackwardOp(PoolOperation, GradientOperation):
    """dx of `pool` (`MaxPool2dBackward`, and mean pooling's gradient).

    Max: each window's dy goes to the window's maximum, the first one in row-major
    window order when several cells tie (as PyTorch); padding never receives it,
    and a window whose maximum is NaN passes none. Mean: dy is shared equally by
    the window's real (unpadded) cells. Overlapping windows add up.
    """

    name = "mir.pool_backward"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    kind = prop_def(ReduceKindAttr)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$x `,` $dy " + POOL_PROPS + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        dy: SSAValue,
        *,
        kind: str | ReduceKind = ReduceKind.MAX,
        kernel_size: Sequence[int],
        stride: Sequence[int] | None = None,
        padding: Sequence[int] = (0, 0),
    ):
        super().__init__(
            operands=[x, dy],
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                **self.window_properties(kernel_size, kernel_size if stride is None else stride, padding),
            },
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x, "x")
        self.cotangent(self.pooled_type())
        return [x]


# Scans, indexing, stop_gradient -----------------------------------------------------------


@irdl_op_definition
class CumsumBackwardOp(GradientOperation):
    """dx of `cumsum` (`CumsumBackward{axis, exclusive}`): the reversed running sum of dy
    (element i sums dy from i on, or after i when `exclusive`)."""

    name = "mir.cumsum_backward"
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    exclusive = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$dy `axis` `=` $axis (`exclusive` $exclusive^)? " + FUNCTIONAL

    def __init__(self, dy: SSAValue, *, axis: int, exclusive: bool = False):
        super().__init__(
            operands=[dy], properties={"axis": i64_attr(axis), "exclusive": unit_flag(exclusive)}
        )

    def normalized_axis(self) -> int:
        return normalize_axis(self.axis.value.data, tensor_type(self.dy).get_num_dims())

    def infer_result_types(self) -> Sequence[Attribute]:
        dy = tensor_type(self.dy)
        require_float(self, dy, "dy")
        self.normalized_axis()
        return [dy]


@irdl_op_definition
class GatherBackwardOp(GradientOperation):
    """dtable of `gather` (`GatherBackward{axis}`): dy's slices summed into `dim_size` zero
    slices along `axis`, at `indices` (repeated indices add up).

    dy has the gather's result shape `T[:axis] + indices.shape + T[axis+1:]`; the
    table's size along `axis` is the `dim_size` property, which dy does not
    determine. Indices follow `gather`: integers, or floats truncated toward zero, in
    `[-dim_size, dim_size)`, a negative one counting from the end.
    """

    name = "mir.gather_backward"
    dy = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    dim_size = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(indices=Role.INDEX))
    assembly_format = "$dy `,` $indices `axis` `=` $axis `dim_size` `=` $dim_size " + FUNCTIONAL

    def __init__(self, dy: SSAValue, indices: SSAValue, *, axis: int, dim_size: int):
        super().__init__(
            operands=[dy, indices], properties={"axis": i64_attr(axis), "dim_size": i64_attr(dim_size)}
        )

    def check_attributes(self) -> None:
        require_non_negative(self, dim_size=self.dim_size.value.data)

    def table_axis(self) -> int:
        """The gathered axis of the table (rank = dy's rank - indices' rank + 1)."""
        rank = tensor_type(self.dy).get_num_dims() - tensor_type(self.indices).get_num_dims() + 1
        return normalize_axis(self.axis.value.data, max(rank, 0))

    def infer_result_types(self) -> Sequence[Attribute]:
        dy, indices = tensor_type(self.dy), tensor_type(self.indices)
        require_float(self, dy, "dy")
        require_index_type(self, indices)
        index_rank = indices.get_num_dims()
        require(
            dy.get_num_dims() >= index_rank,
            self,
            lambda: f"dy {fmt_shape(dy.get_shape())} has fewer dims than indices {fmt_shape(indices.get_shape())}",
        )
        axis = self.table_axis()
        shape = dy.get_shape()
        gathered = shape[axis : axis + index_rank]
        require(
            all(map(dims_match, gathered, indices.get_shape())),
            self,
            lambda: f"dy dims {fmt_shape(gathered)} at axis {axis} differ from the indices shape "
            f"{fmt_shape(indices.get_shape())}",
        )
        table = [*shape[:axis], self.dim_size.value.data, *shape[axis + index_rank :]]
        return [tensor(dy.element_type, table)]


@irdl_op_definition
class StopGradientOp(RlxOperation):
    """The identity, which autodiff does not differentiate through (`StopGradient`).

    The result is its operand's buffer (a view); rewrites that only compute values
    may fold it, but `rlx-decompose-backward` keeps it: it is an instruction to
    autodiff, not a kernel.
    """

    name = "mir.stop_gradient"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT, ViewOf())
    assembly_format = "$input " + FUNCTIONAL

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input])

    def infer_result_types(self) -> Sequence[Attribute]:
        return [tensor_type(self.input)]


OPS = [
    ReluBackwardOp,
    ActivationBackwardOp,
    LayerNormBackwardInputOp,
    LayerNormBackwardGammaOp,
    RmsNormBackwardInputOp,
    RmsNormBackwardGammaOp,
    RmsNormBackwardBetaOp,
    GroupNormBackwardInputOp,
    GroupNormBackwardGammaOp,
    GroupNormBackwardBetaOp,
    RopeBackwardOp,
    AttentionBackwardOp,
    ConvBackwardInputOp,
    ConvBackwardWeightOp,
    PoolBackwardOp,
    CumsumBackwardOp,
    GatherBackwardOp,
    StopGradientOp,
]
ATTRIBUTES = [AttentionWrtAttr]
