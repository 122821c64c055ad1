"""MIR vision ops on NCHW images: layer_norm_2d, resize_nearest_2x, axial_rope_2d,
conv_transpose_2d (ConvNeXt, SAM and SAM 2 blocks)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, FloatAttr, IntegerAttr, TensorType, UnitAttr, f32
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    i64_array,
    i64_attr,
    require,
    require_float,
    require_positive,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.conv import ConvOperation
from rlx_xdsl.dialects.mir.norm import NormOperation
from rlx_xdsl.dialects.traits import COMPUTE, DATA_MOVEMENT
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_shape, tensor


@irdl_op_definition
class LayerNorm2dOp(NormOperation):
    """Layer norm over the channels of each pixel of `x[N, C, H, W]` (`LayerNorm2d{eps}`).

    `(x - mean_c) / sqrt(var_c + eps) * gamma[c] + beta[c]`, statistics over C only
    (biased variance), as ConvNeXt's and SAM's `LayerNorm2d`: PyTorch's `F.layer_norm`
    on the NHWC permutation. gamma and beta are `[C]`.
    """

    name = "mir.layer_norm_2d"
    x = operand_def(TensorType)
    gamma = operand_def(TensorType)
    beta = operand_def(TensorType)
    result = result_def(TensorType)
    eps = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $gamma `,` $beta `eps` `=` $eps " + FUNCTIONAL

    def __init__(self, x: SSAValue, gamma: SSAValue, beta: SSAValue, *, eps: float = 1e-6):
        super().__init__(operands=[x, gamma, beta], properties={"eps": FloatAttr(eps, f32)})

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        require_rank(self, x, 4, "x")
        channels = x.get_shape()[1]
        for what, value in self.affine_operands():
            s = tensor_type(value).get_shape()
            require(
                len(s) == 1 and dims_match(s[0], channels),
                self,
                lambda: f"{what} must have shape [C] = {fmt_shape([channels])}, got {fmt_shape(s)}",
            )
        return [x]


@irdl_op_definition
class ResizeNearest2xOp(RlxOperation):
    """Nearest-neighbour upsampling by 2 of `x[N, C, H, W]` (`ResizeNearest2x`).

    `out[n, c, i, j] = x[n, c, i // 2, j // 2]`, as `F.interpolate(x, scale_factor=2,
    mode="nearest")`: each pixel becomes a 2x2 block (RLX's lowering tiles the image
    instead; see docs/deviations.md). Any dtype.
    """

    name = "mir.resize_nearest_2x"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$input " + FUNCTIONAL

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input])

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        require_rank(self, t, 4, "operand")
        n, c, h, w = t.get_shape()
        double = lambda d: DYNAMIC if d == DYNAMIC else 2 * d  # noqa: E731
        return [tensor(t.element_type, (n, c, double(h), double(w)))]


@irdl_op_definition
class AxialRope2dOp(RlxOperation):
    """2-D rotary embedding of `x[B, num_heads, L, head_dim]` (`AxialRope2d{...}`), as SAM 2.

    Token `t` of the `end_x * end_y` grid (repeated `repeat_factor` times along L:
    token `l` is `t = l mod (end_x * end_y)`) sits at `(t mod end_x, t // end_x)`.
    Channels pair up interleaved, `(x[2i], x[2i + 1])`, and each pair is rotated by
    angle `pos * theta^(-4f / head_dim)`: pairs `i < head_dim / 4` use the x position
    and `f = i`, the others the y position and `f = i - head_dim / 4`. With `inverse`
    the angles are negated (the op's transpose, used by its gradient). The angles and
    their cos/sin are computed in f64, the rotation in x's dtype (f32 for f16/bf16).
    """

    name = "mir.axial_rope_2d"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    end_x = prop_def(IntegerAttr[I64])
    end_y = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    num_heads = prop_def(IntegerAttr[I64])
    theta = prop_def(FloatAttr[Float32Type])
    repeat_factor = prop_def(IntegerAttr[I64])
    inverse = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = (
        "$input `end_x` `=` $end_x `end_y` `=` $end_y `head_dim` `=` $head_dim `num_heads` `=` $num_heads "
        "`theta` `=` $theta `repeat_factor` `=` $repeat_factor (`inverse` $inverse^)? " + FUNCTIONAL
    )

    def __init__(
        self,
        input: SSAValue,
        *,
        end_x: int,
        end_y: int,
        head_dim: int,
        num_heads: int,
        theta: float = 10000.0,
        repeat_factor: int = 1,
        inverse: bool = False,
    ):
        super().__init__(
            operands=[input],
            properties={
                "end_x": i64_attr(end_x),
                "end_y": i64_attr(end_y),
                "head_dim": i64_attr(head_dim),
                "num_heads": i64_attr(num_heads),
                "theta": FloatAttr(theta, f32),
                "repeat_factor": i64_attr(repeat_factor),
                "inverse": UnitAttr() if inverse else None,
            },
        )

    def ints(self, *names: str) -> list[int]:
        return [getattr(self, name).value.data for name in names]

    def check_attributes(self) -> None:
        end_x, end_y, head_dim, num_heads, repeat = self.ints(
            "end_x", "end_y", "head_dim", "num_heads", "repeat_factor"
        )
        require_positive(self, end_x=end_x, end_y=end_y, num_heads=num_heads, repeat_factor=repeat)
        require(
            head_dim > 0 and head_dim % 4 == 0,
            self,
            lambda: f"head_dim must be a positive multiple of 4 (x and y halves of pairs), got {head_dim}",
        )
        theta = self.theta.value.data
        require(theta > 0, self, lambda: f"theta must be positive, got {theta}")

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        require_rank(self, t, 4, "operand")
        require_float(self, t)
        end_x, end_y, head_dim, num_heads, repeat = self.ints(
            "end_x", "end_y", "head_dim", "num_heads", "repeat_factor"
        )
        _, heads, length, width = t.get_shape()
        expected = (num_heads, end_x * end_y * repeat, head_dim)
        require(
            all(map(dims_match, (heads, length, width), expected)),
            self,
            lambda: f"operand must have shape [B, num_heads, end_x * end_y * repeat_factor, head_dim] = "
            f"{fmt_shape([DYNAMIC, *expected])}, got {fmt_shape(t.get_shape())}",
        )
        return [t]


@irdl_op_definition
class ConvTranspose2dOp(ConvOperation):
    """2-D transposed convolution (`ConvTranspose2d{kernel_size, stride, padding,
    output_padding, dilation, groups}`), as `torch.nn.functional.conv_transpose2d`.

    x is `[N, Cin, H, W]` and w is `[Cin, Cout / groups, kh, kw]`; the output is
    `[N, Cout, Ho, Wo]` with `Ho = (H - 1) stride - 2 padding + dilation (kh - 1)
    + output_padding + 1`. It is the input gradient of `mir.conv` of that output size
    with weight w (`mir.conv_backward_input`), which is how it is computed.
    `output_padding` must be below the stride (PyTorch also allows it below the dilation).
    """

    name = "mir.conv_transpose_2d"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    result = result_def(TensorType)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    output_padding = prop_def(I64_ARRAY)
    dilation = prop_def(I64_ARRAY)
    groups = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = (
        "$x `,` $w `kernel_size` `=` $kernel_size `stride` `=` $stride `padding` `=` $padding "
        "`output_padding` `=` $output_padding `dilation` `=` $dilation `groups` `=` $groups " + FUNCTIONAL
    )
    PAIR_MINIMUMS: ClassVar[dict[str, int]] = {**ConvOperation.PAIR_MINIMUMS, "output_padding": 0}

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        *,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        output_padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
    ):
        super().__init__(
            operands=[x, w],
            properties={
                **self.conv_properties(kernel_size, stride, padding, dilation, groups),
                "output_padding": i64_array(output_padding),
            },
        )

    def check_attributes(self) -> None:
        super().check_attributes()
        extra, stride = self.pair("output_padding"), self.pair("stride")
        require(
            all(o < s for o, s in zip(extra, stride)),
            self,
            lambda: f"output_padding {list(extra)} must be less than the stride {list(stride)}",
        )

    def output_size(self, x: TensorType) -> tuple[int, int]:
        """`Ho, Wo` (`?` for a `?` input dim); rejects sizes below 1."""
        out = []
        windows = zip(
            ("height", "width"),
            x.get_shape()[2:],
            self.pair("kernel_size"),
            self.pair("stride"),
            self.pair("padding"),
            self.pair("output_padding"),
            self.pair("dilation"),
        )
        for axis, size, kernel, stride, pad, extra, dilation in windows:
            if size == DYNAMIC:
                out.append(DYNAMIC)
                continue
            o = (size - 1) * stride - 2 * pad + dilation * (kernel - 1) + extra + 1
            require(o >= 1, self, lambda: f"output {axis} would be {o}: padding {pad} is too large for input {axis} {size}")
            out.append(o)
        return out[0], out[1]

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w = tensor_type(self.x), tensor_type(self.w)
        require_rank(self, x, 4, "x")
        require_rank(self, w, 4, "w")
        require_float(self, x, "x")
        require_same_element_type(self, x, {"w": w})
        groups = self.groups.value.data
        cin, w_in = x.get_shape()[1], w.get_shape()[0]
        require(
            dims_match(cin, w_in),
            self,
            lambda: f"w has {w_in} input channels (dim 0), x has {cin}",
        )
        require(
            cin == DYNAMIC or cin % groups == 0,
            self,
            lambda: f"input channels {cin} are not divisible by groups {groups}",
        )
        kernel = self.pair("kernel_size")
        require(
            all(map(dims_match, w.get_shape()[2:], kernel)),
            self,
            lambda: f"w spatial dims {fmt_shape(w.get_shape()[2:])} differ from kernel_size {list(kernel)}",
        )
        per_group = w.get_shape()[1]
        cout = DYNAMIC if per_group == DYNAMIC else per_group * groups
        return [tensor(x.element_type, (x.get_shape()[0], cout, *self.output_size(x)))]


OPS = [LayerNorm2dOp, ResizeNearest2xOp, AxialRope2dOp, ConvTranspose2dOp]
ATTRIBUTES: list[type] = []
