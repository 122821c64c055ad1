"""Decompositions of the fake-quantisation backward kernels into primitive MIR.

Each computes in x's accumulation dtype (f16/bf16 cast to f32) and casts back, as the
kernel does. The grid test `round_half_even(v)` in `[qmin, qmax]` needs no rounding:
with qmin even and qmax odd it is `qmin - 1/2 <= v < qmax + 1/2`. Gradients are `dy`
times a 0/1 (or tanh) factor, so NaNs and signed zeros match the kernels.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.mir.quant import (
    FakeQuantizeBackwardOp,
    FakeQuantizeLsqBackwardScaleOp,
    FakeQuantizeLsqBackwardXOp,
    RangeQuantOperation,
    ScaleMode,
    SteKind,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import (
    dtype_of,
    logical_and,
    require_static,
    scalar,
    shape_of,
    total,
)

HALVES = ("f16", "bf16")


def widened(e: Emitter, value: SSAValue) -> SSAValue:
    return e.mir.cast(value, "f32") if dtypes.dtype_of(dtype_of(value)).name in HALVES else value


def per_channel(e: Emitter, op: RangeQuantOperation, value: SSAValue) -> SSAValue:
    """A `[C]` operand shaped `[1, .., C, .., 1]` to broadcast along `axis` (per tensor: as is,
    or rank 0 for a rank-0 x, so that a `[1]` scale does not widen the result to `[1]`)."""
    axis = op.channel_axis()
    if axis is None:
        return e.mir.reshape(value, new_shape=[]) if not shape_of(op.x) and shape_of(value) else value
    shape = [1] * len(shape_of(op.x))
    shape[axis] = -1
    return e.mir.reshape(value, new_shape=shape)


def indicator(e: Emitter, cond: SSAValue, like: SSAValue) -> SSAValue:
    return e.mir.cast(cond, dtype_of(like))


def grid_mask(e: Emitter, op: RangeQuantOperation, x: SSAValue, step: SSAValue) -> SSAValue:
    """`round_half_even(x * (1 / step))` lies in `[qmin, qmax]`."""
    qmin, qmax = op.grid()
    v = e.mir.mul(x, e.mir.div(scalar(e, 1.0, x), step))
    return logical_and(
        e,
        e.mir.compare(v, scalar(e, qmin - 0.5, v), "ge"),
        e.mir.compare(v, scalar(e, qmax + 0.5, v), "lt"),
    )


def clipping_range(e: Emitter, op: FakeQuantizeBackwardOp, x: SSAValue) -> SSAValue:
    """The kernel's `r` (broadcastable against x), a zero or negative range taken as qmax."""
    _, qmax = op.grid()
    mode = op.mode()
    if mode is ScaleMode.FIXED:
        r = per_channel(e, op, widened(e, op.state))
    else:
        axis, rank = op.channel_axis(), len(shape_of(x))
        axes = [a for a in range(rank) if a != axis]
        magnitude = e.mir.abs(x)
        r = e.mir.reduce(magnitude, kind="max", axes=axes, keep_dim=True) if axes else magnitude
        if mode is ScaleMode.EMA:
            decay = float(np.float32(op.decay.value.data))
            keep = float(np.float32(1) - np.float32(decay))
            state = per_channel(e, op, widened(e, op.state))
            r = e.mir.add(e.mir.mul(scalar(e, decay, x), state), e.mir.mul(scalar(e, keep, x), r))
    return e.mir.where(e.mir.compare(r, scalar(e, 0.0, r), "gt"), r, scalar(e, float(qmax), r))


@DECOMPOSITIONS.register(FakeQuantizeBackwardOp)
def fake_quantize_backward(e: Emitter, op: FakeQuantizeBackwardOp) -> SSAValue:
    x, dy = widened(e, op.x), widened(e, op.dy)
    ste = op.ste.data
    if ste is SteKind.IDENTITY:
        grad = e.mir.mul(dy, scalar(e, 1.0, dy))
    else:
        _, qmax = op.grid()
        r = clipping_range(e, op, x)
        if ste is SteKind.CLIPPED_IDENTITY:
            factor = indicator(e, grid_mask(e, op, x, e.mir.div(r, scalar(e, float(qmax), r))), x)
        elif ste is SteKind.HARD_TANH:
            factor = indicator(e, e.mir.compare(e.mir.abs(x), r, "le"), x)
        else:
            t = e.mir.tanh(e.mir.div(x, r))
            factor = e.mir.sub(scalar(e, 1.0, t), e.mir.mul(t, t))
        grad = e.mir.mul(dy, factor)
    return e.mir.cast(grad, dtype_of(op.x)) if dtype_of(grad) != dtype_of(op.x) else grad


@DECOMPOSITIONS.register(FakeQuantizeLsqBackwardXOp)
def fake_quantize_lsq_backward_x(e: Emitter, op: FakeQuantizeLsqBackwardXOp) -> SSAValue:
    x, dy = widened(e, op.x), widened(e, op.dy)
    step = per_channel(e, op, widened(e, op.scale))
    grad = e.mir.mul(dy, indicator(e, grid_mask(e, op, x, step), x))
    return e.mir.cast(grad, dtype_of(op.x)) if dtype_of(grad) != dtype_of(op.x) else grad


def round_half_even(e: Emitter, v: SSAValue) -> SSAValue:
    """`mir.round` (halves away from zero) with ties moved to the even neighbour: a tie
    (`|r - v| = 1/2`, exact) rounded to an odd `r` (`r/2` not whole) steps back toward 0."""
    r = e.mir.round(v)
    half = e.mir.mul(r, scalar(e, 0.5, r))
    odd = e.mir.compare(e.mir.round(half), half, "ne")
    tie = e.mir.compare(e.mir.abs(e.mir.sub(r, v)), scalar(e, 0.5, r), "eq")
    one = scalar(e, 1.0, r)
    toward_zero = e.mir.where(e.mir.compare(v, scalar(e, 0.0, v), "lt"), e.mir.add(r, one), e.mir.sub(r, one))
    return e.mir.where(logical_and(e, tie, odd), toward_zero, r)


@DECOMPOSITIONS.register(FakeQuantizeLsqBackwardScaleOp)
def fake_quantize_lsq_backward_scale(e: Emitter, op: FakeQuantizeLsqBackwardScaleOp) -> SSAValue:
    """`g · Σ dy · e` with `e` qmin below the grid, qmax above it, `round(v) - v` inside;
    `g = 1 / sqrt(N · qmax)` computed as the kernel does, in x's accumulation dtype."""
    qmin, qmax = op.grid()
    x, dy = widened(e, op.x), widened(e, op.dy)
    shape, axis = shape_of(op.x), op.channel_axis()
    axes = [a for a in range(len(shape)) if a != axis]
    require_static(op, "the dims sharing one step (LSQ's gradient scale counts them)", [shape[a] for a in axes])
    v = e.mir.mul(x, e.mir.div(scalar(e, 1.0, x), per_channel(e, op, widened(e, op.scale))))
    inside = e.mir.sub(round_half_even(e, v), v)
    above = e.mir.where(e.mir.compare(v, scalar(e, qmax + 0.5, v), "ge"), scalar(e, float(qmax), v), inside)
    error = e.mir.where(e.mir.compare(v, scalar(e, qmin - 0.5, v), "lt"), scalar(e, float(qmin), v), above)
    one = dtypes.numpy_dtype(dtype_of(x)).type(1)
    g = one / np.sqrt(one * int(np.prod([shape[a] for a in axes])) * (one * qmax))
    grad = e.mir.mul(total(e, e.mir.mul(dy, error), axes), scalar(e, float(g), x))
    grad = e.mir.reshape(grad, new_shape=list(shape_of(op.scale)))
    return e.mir.cast(grad, dtype_of(op.scale)) if dtype_of(grad) != dtype_of(op.scale) else grad
