"""Lowering of MIR complex and signal ops.

log_mel and its backward are a contraction (`spectrum @ filters`, accumulated as the
interpreter does) and elementwise generics. The complex ops have no lowering: the
lowered IR computes on real element types only (`scalars.storage_type` refuses
complex<f32>) and upstream linalg has no Fourier transform, so conjugate,
complex_norm_sq(+backward) and fft (either layout) are refused with a located
error naming the op; `docs/deviations.md` lists them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.contraction import contract
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.dialects.mir import signal

NO_LOWERING = (signal.ConjugateOp, signal.ComplexNormSqOp, signal.ComplexNormSqBackwardOp, signal.FftOp)
"""Ops whose rule is a located refusal: backend tests have no case for them."""


@LOWERINGS.register(*NO_LOWERING)
def no_lowering(lw: Lowering, op: signal.FftOp) -> Sequence[SSAValue]:
    raise LoweringError(
        "no lowering to linalg: complex<f32> values and Fourier transforms have no upstream "
        "linalg form here (the interpreter, rlx-run's default backend, runs it)"
    )


def _mel(lw: Lowering, op: signal.LogMelOperation) -> SSAValue:
    """`spectrum @ filters` in the accumulation dtype: loops `[*frames, M, F]`, F reduced."""
    dt = lw.operand_dtype(0)
    frames = lw.dims(op.spectrum)[:-1]
    n = len(frames)
    bins, mels = lw.dims(op.filters)
    operands = [(op.spectrum, dt, [*range(n), n + 1]), (op.filters, dt, [n + 1, n])]
    return contract(lw, operands, [*frames, mels, bins], [n + 1], accumulator(dt))


@LOWERINGS.register(signal.LogMelOp)
def lower_log_mel(lw: Lowering, op: signal.LogMelOp) -> Sequence[SSAValue]:
    dt = lw.result_dtype()
    acc = accumulator(dt)
    eps, ln10 = op.eps.value.data, math.log(10)

    def body(s: Scalars, mel: SSAValue, _: SSAValue) -> SSAValue:
        clamped = s.max(mel, s.constant(eps, acc), acc)
        return s.cast(s.div(s.log(clamped), s.constant(ln10, acc), acc), acc, dt)

    mel = _mel(lw, op)
    return [lw.map_elements([mel], lw.dims(mel), dt, body)]


@LOWERINGS.register(signal.LogMelBackwardOp)
def lower_log_mel_backward(lw: Lowering, op: signal.LogMelBackwardOp) -> Sequence[SSAValue]:
    """`inner = dy [m >= eps] / (max(m, eps) ln 10)`, then `inner @ filters^T` (M reduced)."""
    dt = lw.result_dtype()
    acc = accumulator(dt)
    eps, ln10 = op.eps.value.data, math.log(10)

    def body(s: Scalars, mel: SSAValue, dy: SSAValue, _: SSAValue) -> SSAValue:
        kept = s.compare("ge", mel, s.constant(eps, acc), acc)
        scale = s.mul(s.max(mel, s.constant(eps, acc), acc), s.constant(ln10, acc), acc)
        quotient = s.div(s.cast(dy, dt, acc), scale, acc)
        return s.select(kept, quotient, s.constant(0, acc))

    mel = _mel(lw, op)
    inner = lw.map_elements([mel, op.dy], lw.dims(mel), acc, body)
    frames = lw.dims(op.spectrum)[:-1]
    n = len(frames)
    bins, mels = lw.dims(op.filters)
    operands = [(inner, acc, [*range(n), n + 1]), (op.filters, dt, [n, n + 1])]
    return [contract(lw, operands, [*frames, bins, mels], [n + 1], dt)]
