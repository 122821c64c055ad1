"""QuantizeLinear and DequantizeLinear (opset 23: per tensor, per `axis`, or per block of
`block_size` along it) into the integer types MIR has (ui8, i8, i16; i32 inputs of
DequantizeLinear), from elementwise ops, as ONNX's reference computes them:
`clip(round_half_even(x / scale) + zero_point)` and `(x - zero_point) * scale` in f32."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers import common
from rlx_xdsl.importers.onnx.ops.elementwise import SATURATING, cast_as_onnx
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.importers.onnx.types import P, dtype_name

_RANGES = {
    "ui8": (0, 255), "i8": (-128, 127), "ui16": (0, 65535), "i16": (-32768, 32767),
    "ui4": (0, 15), "i4": (-8, 7), "ui2": (0, 3), "i2": (-2, 1),
}  # fmt: skip


def _along(t, value, shape: list[int]):
    """A scale or zero point broadcastable to `shape`: as it is when a scalar, along `axis`
    when 1-D, each entry repeated `block_size` times along `axis` when blocked."""
    vshape = t.shape(value)
    if not vshape or int(np.prod(vshape)) == 1:
        return t.e.mir.reshape(value, new_shape=[])
    axis = t.attr("axis", 1) % len(shape)
    block = t.attr("block_size", 0)
    if not block:
        return t.e.mir.reshape(value, new_shape=[shape[d] if d == axis else 1 for d in range(len(shape))])
    return t.e.mir.gather(value, t.constant(np.arange(shape[axis]) // block, "i64"), axis=axis)


@rule("QuantizeLinear")
def quantize_linear(t, node):
    x = t.value(0)
    shape = t.shape(x)
    if t.input(2) is not None:
        out = t.dtype(t.value(2))
    else:
        out = dtype_name(t.attr("output_dtype", 0) or P.UINT8, t.where)
    if out not in (*_RANGES, *SATURATING, "f4E2M1FN"):
        raise t.fail(f"quantizing to {out} is not supported (only {', '.join((*_RANGES, *SATURATING, 'f4E2M1FN'))})")
    if t.attr("precision"):
        raise t.fail("QuantizeLinear's precision attribute is not supported")
    e = t.e.mir
    scaled = e.div(x, _along(t, t.value(1), shape))
    if out in SATURATING:  # ONNX's reference reads no zero point for them (it must be 0)
        return cast_as_onnx(t, scaled, out)
    if out == "f4E2M1FN":  # no inf or NaN: the cast saturates
        if t.input(2) is not None:
            scaled = e.add(scaled, e.cast(_along(t, t.value(2), shape), t.dtype(scaled)))
        return e.cast(scaled, out)
    q = common.round_half_even(t.e, e.cast(scaled, "f32") if t.dtype(scaled) != "f32" else scaled, "f32")
    if t.input(2) is not None:
        q = e.add(q, e.cast(_along(t, t.value(2), shape), "f32"))
    low, high = _RANGES[out]
    q = e.min(e.max(q, t.constant(low, "f32")), t.constant(high, "f32"))
    return e.cast(q, out)


@rule("DequantizeLinear")
def dequantize_linear(t, node):
    x = t.value(0)
    shape = t.shape(x)
    e = t.e.mir
    dx = e.cast(x, "f32")
    if t.input(2) is not None:
        dx = e.sub(dx, e.cast(_along(t, t.value(2), shape), "f32"))
    scale = _along(t, t.value(1), shape)
    y = e.mul(dx, e.cast(scale, "f32") if t.dtype(scale) != "f32" else scale)
    out = dtype_name(t.attr("output_dtype")) if t.attr("output_dtype") else t.dtype(scale)
    return e.cast(y, out) if out != "f32" else y


@rule("QLinearMatMul")
def qlinear_matmul(t, node):
    """As ONNX's reference: `(a - a_zp) @ (b - b_zp)` in i32, times
    `a_scale * b_scale / y_scale` (in the scales' dtype) in f64, plus `y_zp`, rounded half
    to even and clipped to the result type (`y_zp`'s, else `a`'s); numpy broadcasting."""
    e = t.e.mir

    def centred(index: int):
        x = e.cast(t.value(index), "i32")
        return e.sub(x, e.cast(t.value(index + 2), "i32")) if t.input(index + 2) is not None else x

    out = t.dtype(t.value(7)) if t.input(7) is not None else t.dtype(t.value(0))
    if out not in _RANGES:
        raise t.fail(f"QLinearMatMul into {out} is not supported (only {', '.join(_RANGES)})")
    if t.rank(t.value(0)) < 2 or t.rank(t.value(3)) < 2:
        raise t.fail("QLinearMatMul of a 0-D or 1-D operand is not supported")
    product = e.cast(e.matmul(centred(0), centred(3)), "f64")
    scale = e.div(e.mul(t.value(1), t.value(4)), t.value(6))
    y = e.mul(product, e.cast(scale, "f64"))
    if t.input(7) is not None:
        y = e.add(y, e.cast(t.value(7), "f64"))
    low, high = _RANGES[out]
    y = common.round_half_even(t.e, y, "f64")
    return e.cast(e.min(e.max(y, t.constant(low, "f64")), t.constant(high, "f64")), out)
