"""VJP rules of the quantisation ops (RLX's arms for Quantize, Dequantize, FakeQuantize
and FakeQuantizeLSQ).

* quantize / dequantize, qmatmul / qconv2d: RLX passes the gradient straight through
  (its QMatMul/QConv2d rules cast dx back to i8). Here an integer value carries no
  gradient (`rlx-grad`), so there is nothing to pass across the i8/ui8 values: all four
  register `no_gradient`. Training through
  quantisation uses `mir.fake_quantize`, whose value stays floating point.
* fake_quantize: the straight-through estimator of its `ste` kind. `identity` passes
  the cotangent unchanged; the others emit `fake_quantize_backward`. The range state
  is a running statistic, not a parameter: it gets no gradient.
* fake_quantize_lsq: `fake_quantize_lsq_backward_x` and `_backward_scale`.
* dequant_matmul: straight through to x, `dx = g @ Wᵀ` with the dequantised weights
  `W = dequant_matmul(I_K, w_q, params...)` (the identity as x: the op decodes W
  itself, `[K, N]` for every scheme); w_q is an integer tensor (no gradient) and scale
  and zp get none, as RLX's rule. RLX's rule reads four operands, also in the
  two-operand GGUF form, and breaks there; this one takes the operands the op has.
* The backward ops are linear in `dy` with a mask (or factor) of x and the range:
  their cotangent for `dy` is the same op applied to the incoming cotangent; the mask
  is piecewise constant, so x, the state and the scale get none (almost everywhere).
  The tanh surrogate is smooth in x: its second derivative is not implemented.
* fake_quantize_lsq_backward_scale is `k · Σ dy · e(x, s)` with LSQ's gradient scale `k`
  and `e` the rounding error `round(v) - v` (`v = x / s`) inside the grid, `qmin`/`qmax`
  outside: linear in dy; x and the scale get none, since the rounding passes straight
  through (`round' = 1`, as in the first derivative) and so `e` is constant. The second
  derivative in the step is then `k²`-scaled, the derivative of LSQ's rescaled step.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.autodiff.emit import scalar, unbroadcast
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported, no_gradient
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.quant import (
    DequantizeOp,
    DequantMatmulOp,
    FakeQuantizeBackwardOp,
    FakeQuantizeLsqBackwardScaleOp,
    FakeQuantizeLsqBackwardXOp,
    FakeQuantizeLsqOp,
    FakeQuantizeOp,
    QConv2dOp,
    QMatmulOp,
    QuantizeOp,
    SteKind,
    SteOperation,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC

VJP_RULES.register(QuantizeOp)(no_gradient)
VJP_RULES.register(DequantizeOp)(no_gradient)
VJP_RULES.register(QMatmulOp)(no_gradient)
VJP_RULES.register(QConv2dOp)(no_gradient)


def quantized_weight_bits(value: SSAValue) -> int | None:
    """The bit width a value was fake-quantised to (RLX's `quantized_weight_bits`): `bits`
    when `value` is the result of `fake_quantize` or `fake_quantize_lsq`, else None."""
    owner = value.owner
    if isinstance(owner, (FakeQuantizeOp, FakeQuantizeLsqOp)):
        return owner.bits.value.data
    return None


def ste_props(op: SteOperation) -> dict:
    return {
        "bits": op.bits.value.data,
        "axis": None if op.axis is None else op.axis.value.data,
        "ste": op.ste.data,
        "scale_mode": op.scale_mode.data,
        "decay": None if op.decay is None else op.decay.value.data,
    }


def lsq_props(op: FakeQuantizeLsqOp) -> dict:
    return {"bits": op.bits.value.data, "axis": None if op.axis is None else op.axis.value.data}


@VJP_RULES.register(FakeQuantizeOp)
def fake_quantize(e: Emitter, op: FakeQuantizeOp, cotangents: Cotangents) -> Gradients:
    """`identity`: the cotangent itself; otherwise `fake_quantize_backward(x, g, state)`."""
    (g,) = cotangents
    state = [None] if op.state is not None else []
    if op.ste.data is SteKind.IDENTITY:
        return [g, *state]
    return [lambda: e.mir.fake_quantize_backward(op.x, g, op.state, **ste_props(op)), *state]


@VJP_RULES.register(FakeQuantizeBackwardOp)
def fake_quantize_backward(e: Emitter, op: FakeQuantizeBackwardOp, cotangents: Cotangents) -> Gradients:
    """dy: the same surrogate applied to `g`; x: zero almost everywhere (not for tanh)."""
    (g,) = cotangents

    def x_gradient():
        if op.ste.data is SteKind.TANH:
            raise Unsupported("the second derivative of the tanh straight-through estimator is not implemented")
        return None

    state = [None] if op.state is not None else []
    return [x_gradient, lambda: e.mir.fake_quantize_backward(op.x, g, op.state, **ste_props(op)), *state]


@VJP_RULES.register(FakeQuantizeLsqOp)
def fake_quantize_lsq(e: Emitter, op: FakeQuantizeLsqOp, cotangents: Cotangents) -> Gradients:
    """LSQ's two gradients (Esser et al. 2020), as PyTorch's learnable fake-quantize autograd."""
    (g,) = cotangents
    props = lsq_props(op)
    return [
        lambda: e.mir.fake_quantize_lsq_backward_x(op.x, op.scale, g, **props),
        lambda: e.mir.fake_quantize_lsq_backward_scale(op.x, op.scale, g, **props),
    ]


@VJP_RULES.register(FakeQuantizeLsqBackwardXOp)
def fake_quantize_lsq_backward_x(e: Emitter, op: FakeQuantizeLsqBackwardXOp, cotangents: Cotangents) -> Gradients:
    """dy: the same mask applied to `g`; x and scale: zero almost everywhere."""
    (g,) = cotangents
    return [None, None, lambda: e.mir.fake_quantize_lsq_backward_x(op.x, op.scale, g, **lsq_props(op))]


@VJP_RULES.register(DequantMatmulOp)
def dequant_matmul(e: Emitter, op: DequantMatmulOp, cotangents: Cotangents) -> Gradients:
    """x: `g @ Wᵀ`; the quantised weight, its scales and zero points: none."""
    (g,) = cotangents

    def dx():
        x = tensor_type(op.x)
        k = x.get_shape()[1]
        if k == DYNAMIC:
            raise Unsupported("K must be static to decode the weights for x's gradient")
        eye = e.mir.constant(np.eye(k, dtype=dtypes.numpy_dtype(x.element_type)), x.element_type)
        block = op.block_size.value.data if op.block_size is not None else None
        weights = e.mir.dequant_matmul(eye, op.w_q, *op.params, scheme=op.quant_scheme(), block_size=block)
        return e.mir.matmul(g, e.mir.transpose(weights, perm=[1, 0]))

    return [dx, None, *(None for _ in op.params)]


def along_channel(e: Emitter, op: FakeQuantizeLsqOp | FakeQuantizeLsqBackwardScaleOp, value: SSAValue) -> SSAValue:
    """A `[C]` value shaped `[1, .., C, .., 1]` to broadcast against x (per tensor: as is)."""
    axis = op.channel_axis()
    if axis is None:
        return value
    shape = [1] * tensor_type(op.x).get_num_dims()
    shape[axis] = -1
    return e.mir.reshape(value, new_shape=shape)


def lsq_gradient_scale(e: Emitter, op: FakeQuantizeLsqOp | FakeQuantizeLsqBackwardScaleOp) -> SSAValue:
    """LSQ's gradient scale `k = 1 / sqrt(N qmax)` (N: the elements of x sharing one step), rank 0."""
    shape = tensor_type(op.x).get_shape()
    axis = op.channel_axis()
    reduced = [d for a, d in enumerate(shape) if a != axis]
    if DYNAMIC in reduced:
        raise Unsupported("LSQ's gradient scale needs the dims of x sharing one step to be static")
    _, qmax = op.grid()
    return scalar(e, float(1 / np.sqrt(float(np.prod(reduced)) * qmax)), op.x)


@VJP_RULES.register(FakeQuantizeLsqBackwardScaleOp)
def fake_quantize_lsq_backward_scale(
    e: Emitter, op: FakeQuantizeLsqBackwardScaleOp, cotangents: Cotangents
) -> Gradients:
    """With `G` the cotangent broadcast along x, `m` the grid mask, `v = x / s` and `k`
    LSQ's gradient scale: dy gets `k G e` with `e = fake_quantize_lsq(x, s) / s - m v`.
    x and s get none: under the straight-through rounding (`round' = 1`, as the first
    derivative has it) the rounding error `e` is constant, so LSQ's second derivative in
    the step is `k² Σ f''(y) e²`, all through `fake_quantize_lsq`'s own rule, as
    `jax.jvp(jax.grad(...))` of LSQ written with the gradient-scale trick."""
    (g,) = cotangents
    props = lsq_props(op)
    weight = e.mir.mul(along_channel(e, op, g), lsq_gradient_scale(e, op))
    step = along_channel(e, op, op.scale)

    def d_dy():
        inside = e.mir.fake_quantize_lsq_backward_x(op.x, op.scale, op.x, **props)  # m x
        error = e.mir.div(e.mir.sub(e.mir.fake_quantize_lsq(op.x, op.scale, **props), inside), step)
        return unbroadcast(e, e.mir.mul(weight, error), op.dy)  # a rank-0 x against a [1] scale

    return [None, None, d_dy]
