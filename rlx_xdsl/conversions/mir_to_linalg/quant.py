"""Lowering of MIR quantisation: quantize and dequantize are elementwise `linalg.generic`s.

A per-tensor scale and zero point are scalar constants in the body; per channel, they
are `tensor<Cxf32>` constants read through a map projecting the loops onto `axis`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, math
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import F32, Scalars
from rlx_xdsl.conversions.mir_to_linalg.tensors import PARALLEL, identity, loops
from rlx_xdsl.dense import numpy_to_dense
from rlx_xdsl.dialects.mir import quant


def _affine_generic(lw: Lowering, op: quant.AffineQuantOperation, body) -> SSAValue:
    """A generic over x's elements; `body(s, x, scale, zero_point)` gets each element's
    scale and zero point as f32 scalars."""
    x = op.x
    rank = x.type.get_num_dims()
    dims = lw.dims(x)
    axis = op.channel_axis(x.type)
    inputs = [(x, identity(rank))]
    if axis is not None:
        for values in (op.scale_list(), op.zero_point_list()):
            table = lw.emit(arith.ConstantOp(numpy_to_dense(np.asarray(values, np.float32), f32)))
            inputs.append((table, loops(rank, [axis])))

    def element(s: Scalars, v: SSAValue, *rest: SSAValue) -> SSAValue:
        if axis is None:
            scale = s.constant(op.scale_list()[0], F32)
            zero = s.constant(op.zero_point_list()[0], F32)
        else:
            scale, zero = rest[0], rest[1]
        return body(s, v, scale, zero)

    init = lw.empty(dims, lw.result_dtype())
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, element)[0]


@LOWERINGS.register(quant.QuantizeOp)
def lower_quantize(lw: Lowering, op: quant.QuantizeOp) -> Sequence[SSAValue]:
    """`clamp(roundeven(x / scale) + zero, lo, hi)`; NaN becomes the zero point (as the kernel)."""
    src, dst = lw.operand_dtype(0), lw.result_dtype()
    lo, hi = quant.INT_RANGES[op.storage_name()]

    def body(s: Scalars, v: SSAValue, scale: SSAValue, zero: SSAValue) -> SSAValue:
        v = s.cast(v, src, F32)
        q = s.add(s.emit(math.RoundEvenOp(s.div(v, scale, F32))), zero, F32)
        q = s.select(s.is_nan(v), zero, q)
        q = s.min(s.max(q, s.constant(lo, F32), F32), s.constant(hi, F32), F32)
        return s.cast(q, F32, dst)

    return [_affine_generic(lw, op, body)]


@LOWERINGS.register(quant.DequantizeOp)
def lower_dequantize(lw: Lowering, op: quant.DequantizeOp) -> Sequence[SSAValue]:
    """`(x - zero) * scale` in f32."""
    src = lw.operand_dtype(0)

    def body(s: Scalars, v: SSAValue, scale: SSAValue, zero: SSAValue) -> SSAValue:
        return s.mul(s.sub(s.cast(v, src, F32), zero, F32), scale, F32)

    return [_affine_generic(lw, op, body)]
