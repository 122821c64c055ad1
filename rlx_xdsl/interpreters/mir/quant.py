"""numpy semantics of MIR quantisation: quantize, dequantize (ONNX QuantizeLinear /
DequantizeLinear): f32 arithmetic, rounding half to even, saturation to the integer type
(NaN, which ONNX leaves undefined, quantises to the zero point)."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import quant
from rlx_xdsl.interpreters.common import result_dtype


def per_element(op: quant.AffineQuantOperation, values, rank: int, dtype) -> np.ndarray:
    """`values` (one per scale) shaped to broadcast against the operand: a scalar per
    tensor, a vector along `axis` per channel."""
    array = np.asarray(values, dtype)
    axis = op.channel_axis(quant.tensor_type(op.x))
    if axis is None:
        return array.reshape(())
    shape = [1] * rank
    shape[axis] = array.size
    return array.reshape(shape)


def run_quantize(op: quant.QuantizeOp, x) -> tuple[np.ndarray]:
    scale = per_element(op, op.scale_list(), x.ndim, np.float32)
    zero = per_element(op, op.zero_point_list(), x.ndim, np.float32)
    lo, hi = quant.INT_RANGES[op.storage_name()]
    x = x.astype(np.float32)
    q = np.where(np.isnan(x), zero, np.rint(x / scale) + zero)  # NaN: the zero point
    return (np.clip(q, lo, hi).astype(result_dtype(op)),)


def run_dequantize(op: quant.DequantizeOp, x) -> tuple[np.ndarray]:
    scale = per_element(op, op.scale_list(), x.ndim, np.float32)
    zero = per_element(op, op.zero_point_list(), x.ndim, np.float32)
    return ((x.astype(np.float32) - zero) * scale,)


KERNELS = {
    quant.QuantizeOp: run_quantize,
    quant.DequantizeOp: run_dequantize,
}
