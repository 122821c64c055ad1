"""MIR quantisation ops: `mir.quantize`, `mir.dequantize` (affine, as ONNX's
QuantizeLinear / DequantizeLinear); fake quantisation with a straight-through
estimator (`mir.fake_quantize`, `mir.fake_quantize_backward`) and with a learned
step size (LSQ: `mir.fake_quantize_lsq` and its two backward ops).

A quantisation is a list of `scales` and `zero_points`: one of each for the whole
tensor (no `axis`), or one per channel along `axis`. `quantize` maps a float tensor
to 8-bit integers, `q = saturate(round_half_even(x / scale) + zero_point)`;
`dequantize` maps them back, `x = (q - zero_point) * scale`, in f32. The integer
type is `i8`, or `ui8` when a zero point lies outside i8's range (`docs/quantization.md`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    f32,
    i8,
    i32,
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
    var_operand_def,
)
from xdsl.traits import Pure
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    fmt_list,
    i64_array,
    i64_attr,
    require,
    require_float,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.mir.conv import CONV_PROPS, ConvOperation
from rlx_xdsl.dialects.traits import COMPUTE, ELEMENTWISE
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, normalize_axis

F32_ARRAY = DenseArrayBase.constr(f32)
"""Property constraint for f32 lists (`scales`)."""

ui8 = IntegerType(8, Signedness.UNSIGNED)

INT_RANGES = {"i8": (-128, 127), "ui8": (0, 255)}
"""The saturation range of each quantised integer type."""


def f32_array(values: Sequence[float]) -> DenseArrayBase:
    return DenseArrayBase.from_list(f32, [float(v) for v in values])


def storage_for(zero_points: Sequence[int]) -> str | None:
    """The integer type a quantisation with these zero points produces: `i8` when they
    all fit it, else `ui8` when they all fit that, else None."""
    for name, (lo, hi) in INT_RANGES.items():
        if all(lo <= z <= hi for z in zero_points):
            return name
    return None


class AffineQuantOperation(RlxOperation):
    """The `scales` / `zero_points` / `axis` checks shared by quantize and dequantize."""

    def __init__(
        self,
        x: SSAValue,
        *,
        scales: Sequence[float],
        zero_points: Sequence[int] | None = None,
        axis: int | None = None,
    ):
        zero_points = [0] * len(scales) if zero_points is None else zero_points
        super().__init__(
            operands=[x],
            properties={
                "scales": f32_array(scales),
                "zero_points": i64_array(zero_points),
                "axis": None if axis is None else i64_attr(axis),
            },
        )

    def scale_list(self) -> tuple[float, ...]:
        return tuple(self.scales.get_values())

    def zero_point_list(self) -> tuple[int, ...]:
        return tuple(self.zero_points.get_values())

    def check_attributes(self) -> None:
        scales, zps = self.scale_list(), self.zero_point_list()
        require(len(scales) >= 1, self, "needs at least one scale")
        require(
            len(zps) == len(scales),
            self,
            lambda: f"has {len(scales)} scales but {len(zps)} zero points",
        )
        for s in scales:
            require(math.isfinite(s) and s > 0, self, lambda: f"scales must be positive and finite, got {s}")
        require(
            self.axis is not None or len(scales) == 1,
            self,
            lambda: f"without an axis (per tensor) takes one scale, got {len(scales)}",
        )

    def channel_axis(self, x: TensorType) -> int | None:
        """The normalised channel axis, or None per tensor."""
        if self.axis is None:
            return None
        return normalize_axis(self.axis.value.data, x.get_num_dims())

    def check_channels(self, x: TensorType) -> None:
        """One scale per channel along `axis` (when that dim is static)."""
        axis = self.channel_axis(x)
        if axis is None:
            return
        channels, n = x.get_shape()[axis], len(self.scale_list())
        require(
            channels == DYNAMIC or channels == n,
            self,
            lambda: f"has {n} scales but dim {axis} of the operand has {channels} channels",
        )

    def storage_name(self) -> str:
        zps = self.zero_point_list()
        name = storage_for(zps)
        require(name is not None, self, lambda: f"zero points {fmt_list(zps)} fit neither i8 nor ui8")
        return name


QUANT_FORMAT = "$x `scales` `=` $scales `zero_points` `=` $zero_points (`axis` `=` $axis^)? " + FUNCTIONAL


@irdl_op_definition
class QuantizeOp(AffineQuantOperation):
    """`saturate(round_half_even(x / scale) + zero_point)` to i8/ui8 (ONNX QuantizeLinear).

    x is floating point (f16/bf16 are widened to f32 first); the division is in f32.
    Per channel, the scale and zero point of each element are those of its index
    along `axis`. The result is `ui8` exactly when a zero point does not fit `i8`.
    """

    name = "mir.quantize"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    scales = prop_def(F32_ARRAY)
    zero_points = prop_def(I64_ARRAY)
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = QUANT_FORMAT

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x)
        self.check_channels(x)
        storage = i8 if self.storage_name() == "i8" else ui8
        return [TensorType(storage, x.get_shape())]


@irdl_op_definition
class DequantizeOp(AffineQuantOperation):
    """`(x - zero_point) * scale` in f32, from i8/ui8 (ONNX DequantizeLinear).

    The zero points must lie in the range of x's integer type.
    """

    name = "mir.dequantize"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    scales = prop_def(F32_ARRAY)
    zero_points = prop_def(I64_ARRAY)
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = QUANT_FORMAT

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        name = dtypes.dtype_of(x.element_type).name
        require(
            name in INT_RANGES,
            self,
            lambda: f"operand must have element type i8 or ui8, got {x.element_type}",
        )
        lo, hi = INT_RANGES[name]
        for z in self.zero_point_list():
            require(lo <= z <= hi, self, lambda: f"zero point {z} is outside the range of {name} [{lo}, {hi}]")
        self.check_channels(x)
        return [TensorType(f32, x.get_shape())]


# Fake quantisation ------------------------------------------------------------------


class SteKind(StrEnum):
    """RLX's `SteKind`: the surrogate derivative `fake_quantize_backward` uses."""

    IDENTITY = "identity"
    CLIPPED_IDENTITY = "clipped_identity"
    TANH = "tanh"
    HARD_TANH = "hard_tanh"


class ScaleMode(StrEnum):
    """RLX's `ScaleMode`: where the clipping range of `fake_quantize` comes from."""

    PER_BATCH = "per_batch"
    EMA = "ema"
    FIXED = "fixed"


@irdl_attr_definition
class SteKindAttr(EnumAttribute[SteKind], SpacedOpaqueSyntaxAttribute):
    """`#mir<ste clipped_identity>`, or bare `clipped_identity` in the op."""

    name = "mir.ste"


@irdl_attr_definition
class ScaleModeAttr(EnumAttribute[ScaleMode], SpacedOpaqueSyntaxAttribute):
    """`#mir<scale_mode ema>`, or bare `ema` in the op."""

    name = "mir.scale_mode"


MIN_BITS, MAX_BITS = 2, 8


def signed_range(bits: int) -> tuple[int, int]:
    """The integer grid of a `bits`-bit signed, symmetric quantisation: [-2^(b-1), 2^(b-1)-1]."""
    return -(1 << (bits - 1)), (1 << (bits - 1)) - 1


class RangeQuantOperation(RlxOperation):
    """What the fake quantisations share: `bits`, an optional channel `axis`, a float x,
    and per-channel operands (range state, learned scale) shaped `[C]` (or `[]`/`[1]` per tensor)."""

    def grid(self) -> tuple[int, int]:
        return signed_range(self.bits.value.data)

    def check_attributes(self) -> None:
        bits = self.bits.value.data
        require(
            MIN_BITS <= bits <= MAX_BITS,
            self,
            lambda: f"bits must be in {MIN_BITS}..{MAX_BITS}, got {bits}",
        )

    def channel_axis(self) -> int | None:
        if self.axis is None:
            return None
        return normalize_axis(self.axis.value.data, tensor_type(self.x).get_num_dims())

    def check_x(self) -> TensorType:
        x = tensor_type(self.x)
        require_float(self, x)
        self.channel_axis()
        return x

    def check_per_channel(self, what: str, value: SSAValue) -> TensorType:
        """`value` shares x's dtype and holds one element per channel (one per tensor)."""
        x, t = tensor_type(self.x), tensor_type(value)
        require_same_element_type(self, x, {what: t}, "{what} element type {actual} differs from x's {expected}")
        shape = tuple(t.get_shape())
        axis = self.channel_axis()
        if axis is None:
            require(
                shape in ((), (1,)),
                self,
                lambda: f"{what} must have shape [] or [1] per tensor, got {fmt_shape(shape)}",
            )
        else:
            channels = x.get_shape()[axis]
            require(
                len(shape) == 1 and (DYNAMIC in (shape[0], channels) or shape[0] == channels),
                self,
                lambda: f"{what} must have shape [{channels}] (one per channel along axis {axis}), "
                f"got {fmt_shape(shape)}",
            )
        return t

    def check_same_as_x(self, what: str, value: SSAValue) -> None:
        x, t = tensor_type(self.x), tensor_type(value)
        require(
            t.element_type == x.element_type
            and len(t.get_shape()) == len(x.get_shape())
            and all(a == b or DYNAMIC in (a, b) for a, b in zip(t.get_shape(), x.get_shape())),
            self,
            lambda: f"{what} type {t} differs from x's {x}",
        )


def _range_props(bits: int, axis: int | None) -> dict[str, Attribute | None]:
    return {"bits": i64_attr(bits), "axis": None if axis is None else i64_attr(axis)}


class SteOperation(RangeQuantOperation):
    """fake_quantize and its backward: the clipping range comes from `scale_mode`. Their
    shared result, properties and traits are declared here; each op declares its operands."""

    result = result_def(TensorType)
    bits = prop_def(IntegerAttr[I64])
    axis = opt_prop_def(IntegerAttr[I64])
    ste = prop_def(SteKindAttr)
    scale_mode = prop_def(ScaleModeAttr)
    decay = opt_prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), ELEMENTWISE)

    def mode(self) -> ScaleMode:
        return self.scale_mode.data

    def check_attributes(self) -> None:
        super().check_attributes()
        mode = self.mode()
        if mode is ScaleMode.EMA:
            require(self.decay is not None, self, "scale_mode ema requires a decay")
            decay = self.decay.value.data
            require(0 < decay < 1, self, lambda: f"decay must be in (0, 1), got {decay}")
        else:
            require(self.decay is None, self, lambda: f"decay is set only with scale_mode ema, not {mode}")

    def check_state(self) -> None:
        mode = self.mode()
        if mode is ScaleMode.PER_BATCH:
            require(self.state is None, self, "scale_mode per_batch takes no state operand")
        else:
            require(self.state is not None, self, lambda: f"scale_mode {mode} requires a state operand")
            self.check_per_channel("state", self.state)


def _ste_props(bits, axis, ste, scale_mode, decay) -> dict[str, Attribute | None]:
    return {
        **_range_props(bits, axis),
        "ste": SteKindAttr(SteKind(ste)),
        "scale_mode": ScaleModeAttr(ScaleMode(scale_mode)),
        "decay": None if decay is None else FloatAttr(decay, f32),
    }


STE_PROPS_FORMAT = (
    "`bits` `=` $bits (`axis` `=` $axis^)? `ste` `=` $ste `scale_mode` `=` $scale_mode "
    "(`decay` `=` $decay^)? " + FUNCTIONAL
)


@irdl_op_definition
class FakeQuantizeOp(SteOperation):
    """`clamp(round_half_even(x / s), qmin, qmax) * s`, in x's dtype: a symmetric signed
    `bits`-bit quantisation (qmin = -2^(b-1), qmax = 2^(b-1)-1, zero point 0) and back.

    The step is `s = r / qmax` for the clipping range `r` (per tensor, or per channel
    along `axis`): `per_batch` takes `r = max|x|`; `ema` takes
    `r = decay * state + (1 - decay) * max|x|`; `fixed` takes `r = state`. A range of
    0 uses `s = 1`. `state` is `[C]` per channel, `[]` or `[1]` per tensor. `ste` only
    chooses the gradient (`mir.fake_quantize_backward`).
    """

    name = "mir.fake_quantize"
    x = operand_def(TensorType)
    state = opt_operand_def(TensorType)
    assembly_format = "$x (`,` $state^)? " + STE_PROPS_FORMAT

    def __init__(
        self,
        x: SSAValue,
        state: SSAValue | None = None,
        *,
        bits: int = 8,
        axis: int | None = None,
        ste: str | SteKind = SteKind.IDENTITY,
        scale_mode: str | ScaleMode = ScaleMode.PER_BATCH,
        decay: float | None = None,
    ):
        super().__init__(operands=[x, state], properties=_ste_props(bits, axis, ste, scale_mode, decay))

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_x()
        self.check_state()
        return [x]


@irdl_op_definition
class FakeQuantizeBackwardOp(SteOperation):
    """The surrogate gradient `dx = dy * d(x)` of `fake_quantize` (same properties and state).

    With the forward's step `s` and range `r`: `identity` d = 1; `clipped_identity`
    d = 1 where `round_half_even(x / s)` lies in [qmin, qmax] (PyTorch's fake-quantize
    gradient), else 0; `hard_tanh` d = 1 where `|x| <= r`, else 0; `tanh`
    d = 1 - tanh(x / r)^2. The range is read, not differentiated (state gets no gradient).
    """

    name = "mir.fake_quantize_backward"
    x = operand_def(TensorType)
    dy = operand_def(TensorType)
    state = opt_operand_def(TensorType)
    assembly_format = "$x `,` $dy (`,` $state^)? " + STE_PROPS_FORMAT

    def __init__(
        self,
        x: SSAValue,
        dy: SSAValue,
        state: SSAValue | None = None,
        *,
        bits: int = 8,
        axis: int | None = None,
        ste: str | SteKind = SteKind.IDENTITY,
        scale_mode: str | ScaleMode = ScaleMode.PER_BATCH,
        decay: float | None = None,
    ):
        super().__init__(operands=[x, dy, state], properties=_ste_props(bits, axis, ste, scale_mode, decay))

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_x()
        self.check_same_as_x("dy", self.dy)
        self.check_state()
        return [x]


# LSQ ---------------------------------------------------------------------------------


class LsqOperation(RangeQuantOperation):
    """The LSQ ops: a learned step `scale` per tensor or per channel."""

    def __init__(self, *operands: SSAValue, bits: int = 8, axis: int | None = None):
        super().__init__(operands=list(operands), properties=_range_props(bits, axis))

    def check_operands(self) -> TensorType:
        x = self.check_x()
        self.check_per_channel("scale", self.scale)
        return x


LSQ_PROPS_FORMAT = "`bits` `=` $bits (`axis` `=` $axis^)? " + FUNCTIONAL


@irdl_op_definition
class FakeQuantizeLsqOp(LsqOperation):
    """`clamp(round_half_even(x * (1 / s)), qmin, qmax) * s` with a learned step `s`
    (Esser et al. 2020, "Learned Step Size Quantization"); `[-2^(b-1), 2^(b-1)-1]`, zero
    point 0. Equals PyTorch's `_fake_quantize_learnable_per_tensor_affine` (no axis) and
    `_per_channel_affine` (axis)."""

    name = "mir.fake_quantize_lsq"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    result = result_def(TensorType)
    bits = prop_def(IntegerAttr[I64])
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$x `,` $scale " + LSQ_PROPS_FORMAT

    def infer_result_types(self) -> Sequence[Attribute]:
        return [self.check_operands()]


@irdl_op_definition
class FakeQuantizeLsqBackwardXOp(LsqOperation):
    """`dx = dy` where `round_half_even(x * (1 / s))` lies in [qmin, qmax], else 0."""

    name = "mir.fake_quantize_lsq_backward_x"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    bits = prop_def(IntegerAttr[I64])
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$x `,` $scale `,` $dy " + LSQ_PROPS_FORMAT

    def infer_result_types(self) -> Sequence[Attribute]:
        x = self.check_operands()
        self.check_same_as_x("dy", self.dy)
        return [x]


@irdl_op_definition
class FakeQuantizeLsqBackwardScaleOp(LsqOperation):
    """`ds = g * sum(dy * e)` over the elements sharing a step, LSQ's gradient: with
    `v = x / s`, `e = round_half_even(v) - v` inside the grid, `qmin` below it, `qmax`
    above; `g = 1 / sqrt(N * qmax)`, N the number of elements per step (LSQ's gradient scale)."""

    name = "mir.fake_quantize_lsq_backward_scale"
    x = operand_def(TensorType)
    scale = operand_def(TensorType)
    dy = operand_def(TensorType)
    result = result_def(TensorType)
    bits = prop_def(IntegerAttr[I64])
    axis = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), ELEMENTWISE)
    assembly_format = "$x `,` $scale `,` $dy " + LSQ_PROPS_FORMAT

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_operands()
        self.check_same_as_x("dy", self.dy)
        return [tensor_type(self.scale)]


# Integer matmul and convolution ---------------------------------------------------------


class IntegerContractionOperation(RlxOperation):
    """qmatmul and qconv2d: i8/ui8 operands with zero points, an i32 bias, a requantising
    multiplier, and an 8-bit result (`i8`, or `ui8` when `out_zp` needs it)."""

    @staticmethod
    def requant_properties(x_zp: int, w_zp: int, out_zp: int, mult: float) -> dict[str, Attribute]:
        return {
            "x_zp": i64_attr(x_zp),
            "w_zp": i64_attr(w_zp),
            "out_zp": i64_attr(out_zp),
            "mult": FloatAttr(mult, f32),
        }

    def check_requant(self) -> None:
        mult = self.mult.value.data
        require(math.isfinite(mult) and mult > 0, self, lambda: f"mult must be positive and finite, got {mult}")

    def out_storage(self) -> str:
        out_zp = self.out_zp.value.data
        name = storage_for([out_zp])
        require(name is not None, self, lambda: f"out_zp {out_zp} fits neither i8 nor ui8")
        return name

    def check_integer_operands(self) -> tuple[TensorType, TensorType]:
        """x and w are i8/ui8 with zero points in their range; bias is i32."""
        x, w, bias = tensor_type(self.x), tensor_type(self.w), tensor_type(self.bias)
        for what, t, zp in (("x", x, self.x_zp.value.data), ("w", w, self.w_zp.value.data)):
            name = dtypes.dtype_of(t.element_type).name
            require(
                name in INT_RANGES,
                self,
                lambda: f"{what} must have element type i8 or ui8, got {t.element_type}",
            )
            lo, hi = INT_RANGES[name]
            require(
                lo <= zp <= hi,
                self,
                lambda: f"{what}_zp {zp} is outside the range of {name} [{lo}, {hi}]",
            )
        require(
            bias.element_type == i32,
            self,
            lambda: f"bias must have element type i32, got {bias.element_type}",
        )
        return x, w

    def check_bias(self, channels: int) -> None:
        shape = tuple(tensor_type(self.bias).get_shape())
        require(
            len(shape) == 1 and (DYNAMIC in (shape[0], channels) or shape[0] == channels),
            self,
            lambda: f"bias must have shape [{channels}] (one per output channel), got {fmt_shape(shape)}",
        )

    def result_element_type(self) -> Attribute:
        return i8 if self.out_storage() == "i8" else ui8


REQUANT_FORMAT = "`x_zp` `=` $x_zp `w_zp` `=` $w_zp `out_zp` `=` $out_zp `mult` `=` $mult "


@irdl_op_definition
class QMatmulOp(IntegerContractionOperation):
    """`saturate(round_half_even(((x - x_zp) @ (w - w_zp) + bias) * mult) + out_zp)`
    (RLX's `QMatMul`; ONNX QLinearMatMul with `mult = x_scale * w_scale / y_scale`, plus
    an i32 bias added to the accumulator as in QLinearConv).

    x is `[..., M, K]` i8/ui8, w `[K, N]` i8/ui8, bias `[N]` i32; the result `[..., M, N]`.
    The accumulation is exact; the product with `mult` is in f64 (as ONNX's reference).
    """

    name = "mir.qmatmul"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    x_zp = prop_def(IntegerAttr[I64])
    w_zp = prop_def(IntegerAttr[I64])
    out_zp = prop_def(IntegerAttr[I64])
    mult = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $bias " + REQUANT_FORMAT + FUNCTIONAL

    def __init__(
        self, x: SSAValue, w: SSAValue, bias: SSAValue, *, x_zp: int = 0, w_zp: int = 0, out_zp: int = 0,
        mult: float,
    ):  # fmt: skip
        super().__init__(
            operands=[x, w, bias],
            properties=IntegerContractionOperation.requant_properties(x_zp, w_zp, out_zp, mult),
        )

    def check_attributes(self) -> None:
        self.check_requant()

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w = self.check_integer_operands()
        require(x.get_num_dims() >= 2, self, lambda: f"x must have rank >= 2, got {fmt_shape(x.get_shape())}")
        require(w.get_num_dims() == 2, self, lambda: f"w must have rank 2, got {fmt_shape(w.get_shape())}")
        *batch, m, k = x.get_shape()
        k_w, n = w.get_shape()
        require(
            DYNAMIC in (k, k_w) or k == k_w,
            self,
            lambda: f"contraction dims {k} and {k_w} differ",
        )
        self.check_bias(n)
        return [TensorType(self.result_element_type(), (*batch, m, n))]


@irdl_op_definition
class QConv2dOp(IntegerContractionOperation, ConvOperation):
    """`mir.conv` on `x - x_zp` and `w - w_zp` (zero padding of the centred input), plus
    the i32 bias per output channel, requantised as `qmatmul` (RLX's `QConv2d`; ONNX
    QLinearConv with `mult = x_scale * w_scale / y_scale`).

    x is `[N, Cin, H, W]` i8/ui8, w `[Cout, Cin / groups, kh, kw]` i8/ui8, bias `[Cout]` i32.
    """

    name = "mir.qconv2d"
    x = operand_def(TensorType)
    w = operand_def(TensorType)
    bias = operand_def(TensorType)
    result = result_def(TensorType)
    kernel_size = prop_def(I64_ARRAY)
    stride = prop_def(I64_ARRAY)
    padding = prop_def(I64_ARRAY)
    dilation = prop_def(I64_ARRAY)
    groups = prop_def(IntegerAttr[I64])
    x_zp = prop_def(IntegerAttr[I64])
    w_zp = prop_def(IntegerAttr[I64])
    out_zp = prop_def(IntegerAttr[I64])
    mult = prop_def(FloatAttr[Float32Type])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = "$x `,` $w `,` $bias " + CONV_PROPS + REQUANT_FORMAT + FUNCTIONAL

    def __init__(
        self,
        x: SSAValue,
        w: SSAValue,
        bias: SSAValue,
        *,
        kernel_size: Sequence[int],
        stride: Sequence[int] = (1, 1),
        padding: Sequence[int] = (0, 0),
        dilation: Sequence[int] = (1, 1),
        groups: int = 1,
        x_zp: int = 0,
        w_zp: int = 0,
        out_zp: int = 0,
        mult: float,
    ):
        super().__init__(
            operands=[x, w, bias],
            properties={
                **ConvOperation.conv_properties(kernel_size, stride, padding, dilation, groups),
                **IntegerContractionOperation.requant_properties(x_zp, w_zp, out_zp, mult),
            },
        )

    def check_attributes(self) -> None:
        ConvOperation.check_attributes(self)
        self.check_requant()

    def infer_result_types(self) -> Sequence[Attribute]:
        x, w = self.check_integer_operands()
        require_rank(self, x, 4, "x")
        require_rank(self, w, 4, "w")
        self.check_channels(x, w)
        self.check_kernel(w)
        self.check_bias(w.get_shape()[0])
        batch, cout = x.get_shape()[0], w.get_shape()[0]
        return [TensorType(self.result_element_type(), (batch, cout, *self.spatial_output(x)))]


# Weight-only quantised matmul ---------------------------------------------------------------


class QuantScheme(StrEnum):
    """RLX's `QuantScheme`, the weight encodings `mir.dequant_matmul` reads (of GGUF's, Q4_0
    Q8_0 and the K-quants Q2_K ... Q8_K)."""

    INT8_BLOCK = "int8_block"
    INT8_BLOCK_ASYM = "int8_block_asym"
    INT4_BLOCK = "int4_block"
    FP8_E4M3 = "fp8_e4m3"
    FP8_E5M2 = "fp8_e5m2"
    NVFP4_BLOCK = "nvfp4_block"
    GGUF_Q4_0 = "gguf_q4_0"
    GGUF_Q8_0 = "gguf_q8_0"
    GGUF_Q6_K = "gguf_q6_k"
    GGUF_Q4_K = "gguf_q4_k"
    GGUF_Q5_K = "gguf_q5_k"
    GGUF_Q2_K = "gguf_q2_k"
    GGUF_Q3_K = "gguf_q3_k"
    GGUF_Q8_K = "gguf_q8_k"

    @property
    def is_gguf(self) -> bool:
        """Operands `[x, packed]`: the weight as a GGUF file stores it."""
        return self in GGUF_BLOCKS

    @property
    def has_block_size(self) -> bool:
        return self in (QuantScheme.INT8_BLOCK, QuantScheme.INT8_BLOCK_ASYM, QuantScheme.INT4_BLOCK)

    @property
    def packs_nibbles(self) -> bool:
        """Two 4-bit codes per byte, low nibble first along K."""
        return self in (QuantScheme.INT4_BLOCK, QuantScheme.NVFP4_BLOCK)


@irdl_attr_definition
class QuantSchemeAttr(EnumAttribute[QuantScheme], SpacedOpaqueSyntaxAttribute):
    """`#mir<quant_scheme int4_block>`, or bare `int4_block` in the op."""

    name = "mir.quant_scheme"


NVFP4_BLOCK = 16
"""NVFP4's block: one E4M3 scale per 16 E2M1 values along K."""

GGUF_BLOCKS = {QuantScheme.GGUF_Q4_0: (32, 18), QuantScheme.GGUF_Q8_0: (32, 34), QuantScheme.GGUF_Q6_K: (256, 210),
               QuantScheme.GGUF_Q4_K: (256, 144), QuantScheme.GGUF_Q5_K: (256, 176),
               QuantScheme.GGUF_Q2_K: (256, 84), QuantScheme.GGUF_Q3_K: (256, 110),
               QuantScheme.GGUF_Q8_K: (256, 292)}  # fmt: skip
"""GGML's `(values, bytes)` per block."""


# Shape and dtype checks of block-quantised weights (dequant_matmul, dequant_grouped_matmul) ----


def require_shape_of(op: RlxOperation, what: str, value: SSAValue, expected: Sequence[int], why: str) -> None:
    shape = tuple(tensor_type(value).get_shape())
    require(
        len(shape) == len(expected) and all(DYNAMIC in (a, b) or a == b for a, b in zip(shape, expected)),
        op,
        lambda: f"{what} must have shape {fmt_shape(expected)} ({why}), got {fmt_shape(shape)}",
    )


def require_dtype_of(op: RlxOperation, what: str, value: SSAValue, names: Sequence[str]) -> None:
    et = tensor_type(value).element_type
    name = dtypes.dtype_of(et).name
    require(name in names, op, lambda: f"{what} must have element type {' or '.join(names)}, got {et}")


def check_quantised_weights(
    op: RlxOperation,
    scheme: QuantScheme,
    block: int | None,
    k: int,
    w_q: SSAValue,
    scale: SSAValue,
    zp: SSAValue,
    experts: Sequence[int] = (),
) -> int:
    """Check `w_q`, `scale` and `zp` of a non-GGUF scheme decoding `W[*experts, K, N]`
    (their shapes gain the leading `experts` dims); return N."""
    lead = tuple(experts)
    w = tensor_type(w_q)
    rank = len(lead) + 2
    require(w.get_num_dims() == rank, op, lambda: f"w_q must have rank {rank}, got {fmt_shape(w.get_shape())}")
    n = w.get_shape()[-1]
    if block is not None and k != DYNAMIC:
        require(k % block == 0, op, lambda: f"K = {k} is not a multiple of the block size {block}")
    blocks = DYNAMIC if k == DYNAMIC or block is None else k // block
    rows = k if k == DYNAMIC or not scheme.packs_nibbles else k // 2
    if scheme.packs_nibbles and k != DYNAMIC:
        require(k % 2 == 0, op, lambda: f"K = {k} must be even (two 4-bit values per byte)")
    packing = "two 4-bit values per byte along K" if scheme.packs_nibbles else "one code per weight"
    require_dtype_of(op, "w_q", w_q, ("i8",) if scheme.name.startswith("INT8") else ("ui8",))
    require_shape_of(op, "w_q", w_q, (*lead, rows, n), packing)
    floats = ("f32", "f16", "bf16", "f64")
    if scheme is QuantScheme.NVFP4_BLOCK:
        require_dtype_of(op, "scale", scale, ("ui8",))
        require_shape_of(op, "scale", scale, (*lead, blocks, n), "one E4M3 code per 16 values and column")
        require_dtype_of(op, "zp", zp, floats)
        require_shape_of(op, "zp", zp, (1,), "the per-tensor scale")
        return n
    require_dtype_of(op, "scale", scale, floats)
    require_dtype_of(op, "zp", zp, floats)
    if block is None:
        scale_shape = tuple(tensor_type(scale).get_shape())
        per_tensor, per_column = (*lead, 1), (*lead, n)
        require(
            len(scale_shape) == len(per_column)
            and all(DYNAMIC in (a, b) or a == b for a, b in zip(scale_shape[:-1], lead))
            and (scale_shape[-1] in (1, n) or DYNAMIC in (scale_shape[-1], n)),
            op,
            lambda: f"scale must have shape {fmt_shape(per_tensor)} or {fmt_shape(per_column)} "
            f"(per tensor or per column), got {fmt_shape(scale_shape)}",
        )
    else:
        require_shape_of(op, "scale", scale, (*lead, blocks, n), "one per block and column")
    if scheme is QuantScheme.INT8_BLOCK_ASYM:
        require_shape_of(op, "zp", zp, (*lead, blocks, n), "one per block and column")
    else:
        require_shape_of(op, "zp", zp, (1,), f"unused by {scheme}")
    return n


class BlockQuantOperation(RlxOperation):
    """The `scheme` and `block_size` properties of the weight-only quantised matmuls
    (methods only; each op declares the properties)."""

    def quant_scheme(self) -> QuantScheme:
        return self.scheme.data

    def block(self) -> int | None:
        if self.quant_scheme() is QuantScheme.NVFP4_BLOCK:
            return NVFP4_BLOCK
        return None if self.block_size is None else self.block_size.value.data

    def check_attributes(self) -> None:
        scheme = self.quant_scheme()
        if scheme.has_block_size:
            require(self.block_size is not None, self, lambda: f"scheme {scheme} requires a block_size")
            b = self.block_size.value.data
            require(b >= 1, self, lambda: f"block_size must be >= 1, got {b}")
            require(
                scheme is not QuantScheme.INT4_BLOCK or b % 2 == 0,
                self,
                lambda: f"int4_block needs an even block_size (whole bytes), got {b}",
            )
        else:
            require(self.block_size is None, self, lambda: f"scheme {scheme} takes no block_size")


@irdl_op_definition
class DequantMatmulOp(BlockQuantOperation):
    """`y = x @ W` with `W[K, N]` decoded from quantised operands (RLX's `DequantMatMul`).

    `x` is `[M, K]` (any float dtype; W is decoded and the product accumulates in x's
    accumulation dtype, f32 for halves, and rounds to x's dtype); scales and zero points
    are floats of any width; blocks of `B = block_size` run along K, `[K/B, N]` below means one value per
    block and output column:

    * `int8_block`: `w_q [K, N]` i8, `scale [K/B, N]` float, `zp [1]` float (unused):
      `W = w_q * scale`;
    * `int8_block_asym`: as int8_block with `zp [K/B, N]` float: `W = (w_q - zp) * scale`;
    * `int4_block`: `w_q [K/2, N]` ui8, two signed 4-bit values per byte (low nibble =
      even k), `scale [K/B, N]`, `zp [1]` (unused): `W = int4 * scale` (B even);
    * `fp8_e4m3`, `fp8_e5m2`: `w_q [K, N]` ui8 holding OCP FP8 codes, `scale [1]` or `[N]`
      float, `zp [1]` (unused): `W = fp8 * scale` (no block_size);
    * `nvfp4_block`: `w_q [K/2, N]` ui8 of E2M1 codes (low nibble first), `scale [K/16, N]`
      ui8 of E4M3 codes, `zp [1]` float, the per-tensor scale: `W = e2m1 * e4m3 * zp`
      (NVIDIA's NVFP4; no block_size, the block is 16);
    * `gguf_q8_0`, `gguf_q4_0`: operands `[x, packed]`, `packed` the `[N * K/32 * B]` ui8
      bytes of a GGUF tensor of N rows of K values (GGML blocks of 32 values: an f16 scale
      `d`, then 32 i8 (Q8_0, B = 34) or 16 bytes of 4-bit codes (Q4_0, B = 18; byte i holds
      values i (low nibble) and i + 16, each `nibble - 8`)); `W = d * q` is `[N, K]` and
      `y = x @ Wᵀ`; N comes from the byte count;
    * `gguf_q6_k`: blocks of 256 values in 210 bytes: `ql[128]` (low 4 bits), `qh[64]`
      (high 2 bits), 16 i8 sub-block scales, an f16 `d`; value e of a block, with
      `e = 128 h + 64 s + 32 u + t`: `q = ((ql[64 h + 32 u + t] >> 4 s) & 15) |
      (((qh[32 h + t] >> (4 s + 2 u)) & 3) << 4) - 32`, `W = d * scales[e / 16] * q`;
    * `gguf_q4_k`: blocks of 256 values in 144 bytes: f16 `d`, f16 `dmin`, 12 bytes `S` of
      6-bit scales and mins for 8 sub-blocks of 32, `qs[128]`; sub-block `j = 2 i + p`
      reads nibble p of `qs[32 i + t]`; `sc, m = S[j] & 63, S[j + 4] & 63` for j < 4,
      else `(S[j + 4] & 15) | (S[j - 4] >> 6) << 4, (S[j + 4] >> 4) | (S[j] >> 6) << 4`;
      `W = d * sc * q - dmin * m`;
    * `gguf_q5_k`: as Q4_K with 32 bytes `qh` before `qs` (176 bytes): value t of
      sub-block j gets bit 4 from bit j of `qh[t]`;
    * `gguf_q2_k`: 84 bytes: 16 scale bytes (low nibble scale, high nibble min), `qs[64]`,
      f16 `d`, f16 `dmin`; value `e = 128 h + 32 s + t` is `(qs[32 h + t] >> 2 s) & 3`,
      `W = d * (S[e/16] & 15) * q - dmin * (S[e/16] >> 4)`;
    * `gguf_q3_k`: 110 bytes: `hmask[32]`, `qs[64]`, 12 bytes of 6-bit scales, f16 `d`;
      value `e = 128 h + 32 s + t`: `q = ((qs[32 h + t] >> 2 s) & 3) - 4 * (1 - ((hmask[t]
      >> (4 h + s)) & 1))`; sub-block k = e/16 has scale `((S[k % 8] >> 4 (k / 8)) & 15 |
      ((S[8 + k % 4] >> 2 (k / 4)) & 3) << 4) - 32`; `W = d * scale * q`;
    * `gguf_q8_k`: 292 bytes: an f32 `d`, 256 i8 `qs`, 16 i16 sums (unused): `W = d * q`.
    """

    name = "mir.dequant_matmul"
    x = operand_def(TensorType)
    w_q = operand_def(TensorType)
    params = var_operand_def(TensorType)
    result = result_def(TensorType)
    scheme = prop_def(QuantSchemeAttr)
    block_size = opt_prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = (
        "$x `,` $w_q (`,` $params^)? `scheme` `=` $scheme (`block_size` `=` $block_size^)? " + FUNCTIONAL
    )

    def __init__(
        self,
        x: SSAValue,
        w_q: SSAValue,
        scale: SSAValue | None = None,
        zp: SSAValue | None = None,
        *,
        scheme: str | QuantScheme,
        block_size: int | None = None,
    ):
        super().__init__(
            operands=[x, w_q, [v for v in (scale, zp) if v is not None]],
            properties={
                "scheme": QuantSchemeAttr(QuantScheme(scheme)),
                "block_size": None if block_size is None else i64_attr(block_size),
            },
        )

    @property
    def scale(self) -> SSAValue:
        return self.params[0]

    @property
    def zp(self) -> SSAValue:
        return self.params[1]

    def infer_result_types(self) -> Sequence[Attribute]:
        x = tensor_type(self.x)
        require_float(self, x, "x")
        require(x.get_num_dims() == 2, self, lambda: f"x must have rank 2 ([M, K]), got {fmt_shape(x.get_shape())}")
        scheme = self.quant_scheme()
        wanted = 0 if scheme.is_gguf else 2
        require(
            len(self.params) == wanted,
            self,
            lambda: f"scheme {scheme} takes {'[x, packed]' if scheme.is_gguf else '[x, w_q, scale, zp]'}, "
            f"got {2 + len(self.params)} operands",
        )
        if scheme.is_gguf:
            return [self.gguf_result(x)]
        m, k = x.get_shape()
        n = check_quantised_weights(self, scheme, self.block(), k, self.w_q, self.scale, self.zp)
        return [TensorType(x.element_type, (m, n))]

    def gguf_row_bytes(self, k: int) -> int:
        values, size = GGUF_BLOCKS[self.quant_scheme()]
        return k // values * size

    def gguf_result(self, x: TensorType) -> TensorType:
        """`[M, N]`, N the number of K-value rows the packed bytes hold."""
        scheme = self.quant_scheme()
        values, size = GGUF_BLOCKS[scheme]
        m, k = x.get_shape()
        require_dtype_of(self, "packed", self.w_q, ("ui8",))
        packed = tensor_type(self.w_q).get_shape()
        require(len(packed) == 1, self, lambda: f"packed must have rank 1 (the bytes), got {fmt_shape(packed)}")
        require(
            k != DYNAMIC,
            self,
            f"{scheme} needs a static K to find the rows in the packed bytes",
        )
        require(k % values == 0, self, lambda: f"K = {k} is not a multiple of {scheme}'s block of {values} values")
        row = self.gguf_row_bytes(k)
        n = DYNAMIC
        if packed[0] != DYNAMIC:
            require(
                packed[0] % row == 0,
                self,
                lambda: f"packed has {packed[0]} bytes, not a whole number of rows of K = {k} values "
                f"({k // values} blocks of {size} bytes = {row} bytes per row)",
            )
            n = packed[0] // row
        return TensorType(x.element_type, (m, n))


OPS = [
    QuantizeOp,
    DequantizeOp,
    FakeQuantizeOp,
    FakeQuantizeBackwardOp,
    FakeQuantizeLsqOp,
    FakeQuantizeLsqBackwardXOp,
    FakeQuantizeLsqBackwardScaleOp,
    QMatmulOp,
    QConv2dOp,
    DequantMatmulOp,
]
ATTRIBUTES = [SteKindAttr, ScaleModeAttr, QuantSchemeAttr]
