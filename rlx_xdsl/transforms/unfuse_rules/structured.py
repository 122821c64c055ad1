"""Unfolding the state-space recurrences in time: `mir.selective_scan`, `mir.gated_delta_net`.

Each step of the recurrence becomes primitive MIR ops (narrow, reshape, exp, mul,
add, sub, reduce, matmul) on that step's slices, and the per-step outputs are
joined by one `mir.concat`, as RLX's unfuse does. The unfolded graph computes what
the op's kernel computes, operation for operation and rounding for rounding, so
autodiff and backends without the fused kernel see the same numbers. The sequence
is unrolled, so shapes must be static.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.structured import (
    GatedDeltaNetOp,
    SelectiveScanOp,
    inverse_sqrt,
)
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import is_static
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


def static_shapes(op: SelectiveScanOp | GatedDeltaNetOp) -> None:
    """Unrolling needs every dim (the step count, the zero state's shape) and at least one step."""
    for operand in op.operands:
        t = tensor_type(operand)
        if not is_static(t.get_shape()):
            raise OpError(op, f"'{op.name}' can only be unfolded in time with static shapes, got {t}")
    if tensor_type(op.operands[0]).get_shape()[1] == 0:
        raise OpError(op, f"'{op.name}' over an empty sequence has nothing to unfold")


def zeros(e: Emitter, like: SSAValue, shape: Sequence[int]) -> SSAValue:
    """A zero constant of `like`'s dtype."""
    element = tensor_type(like).element_type
    return e.mir.constant(np.zeros(shape, dtypes.numpy_dtype(element)), element)


def step_slice(e: Emitter, value: SSAValue, t: int, shape: Sequence[int]) -> SSAValue:
    """`value[:, t]` (the step's slice along the sequence axis) reshaped to `shape`."""
    return e.mir.reshape(e.mir.narrow(value, axis=1, start=t, len=1), new_shape=list(shape))


@UNFUSE_RULES.register(SelectiveScanOp)
def unfold_selective_scan(e: Emitter, op: SelectiveScanOp) -> Sequence[SSAValue]:
    static_shapes(op)
    batch, seq, hidden = tensor_type(op.x).get_shape()
    size = tensor_type(op.a).get_shape()[1]
    state = zeros(e, op.x, [batch, hidden, size])
    ys = []
    for t in range(seq):
        x_t = step_slice(e, op.x, t, [batch, hidden, 1])
        delta_t = step_slice(e, op.delta, t, [batch, hidden, 1])
        b_t = e.mir.narrow(op.b, axis=1, start=t, len=1)  # [B, 1, N]
        c_t = e.mir.narrow(op.c, axis=1, start=t, len=1)
        decay = e.mir.exp(e.mir.mul(delta_t, op.a))
        drive = e.mir.mul(e.mir.mul(delta_t, x_t), b_t)
        state = e.mir.add(e.mir.mul(decay, state), drive)
        y_t = e.mir.reduce(e.mir.mul(c_t, state), kind="sum", axes=[-1])  # [B, H]
        ys.append(e.mir.reshape(y_t, new_shape=[batch, 1, hidden]))
    return [e.mir.concat(*ys, axis=1)]


@UNFUSE_RULES.register(GatedDeltaNetOp)
def unfold_gated_delta_net(e: Emitter, op: GatedDeltaNetOp) -> Sequence[SSAValue]:
    static_shapes(op)
    batch, seq, heads, size = tensor_type(op.q).get_shape()
    element = tensor_type(op.q).element_type
    memory = op.state if op.state is not None else zeros(e, op.q, [batch, heads, size, size])
    scale = e.mir.constant(np.array(inverse_sqrt(size), dtypes.numpy_dtype(element)), element)
    row, column, gate = [batch, heads, 1, size], [batch, heads, size, 1], [batch, heads, 1, 1]
    outputs = []
    for t in range(seq):
        q_t, k_t, v_t = (step_slice(e, m, t, row) for m in (op.q, op.k, op.v))
        memory = e.mir.mul(memory, e.mir.exp(step_slice(e, op.g, t, gate)))
        d = e.mir.mul(e.mir.sub(v_t, e.mir.matmul(k_t, memory)), step_slice(e, op.beta, t, gate))
        memory = e.mir.add(memory, e.mir.matmul(e.mir.reshape(k_t, new_shape=column), d))
        o_t = e.mir.mul(e.mir.matmul(q_t, memory), scale)
        outputs.append(e.mir.reshape(o_t, new_shape=[batch, 1, heads, size]))
    output = e.mir.concat(*outputs, axis=1)
    return [output] if op.state is None else [output, memory]
