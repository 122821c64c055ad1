"""MIR quantisation ops: `mir.quantize`, `mir.dequantize` (affine, as ONNX's
QuantizeLinear / DequantizeLinear).

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
    IntegerAttr,
    IntegerType,
    Signedness,
    TensorType,
    f32,
    i8,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, opt_prop_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

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
    tensor_type,
)
from rlx_xdsl.dialects.traits import ELEMENTWISE
from rlx_xdsl.shapes import DYNAMIC, normalize_axis

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


OPS = [QuantizeOp, DequantizeOp]
