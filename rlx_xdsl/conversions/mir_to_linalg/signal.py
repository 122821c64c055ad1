"""Lowering of MIR complex and signal ops.

log_mel and its backward are a contraction (`spectrum @ filters`, accumulated as the
interpreter does) and elementwise generics. `fft` on RLX's real layout with a static
length is a DFT: one contraction with a constant `[2N, 2N]` real matrix (O(N²), no
butterflies: linalg has no FFT). The complex ops have no lowering: the lowered IR
computes on real element types only (`scalars.storage_type` refuses complex<f32>), so
conjugate, complex_norm_sq(+backward) and fft on complex<f32> are refused with a
located error naming the op; `docs/deviations.md` lists them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from rlx_xdsl.dense import numpy_to_dense
from rlx_xdsl.shapes import DYNAMIC

from rlx_xdsl.conversions.mir_to_linalg.contraction import contract
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.dialects.mir import signal

NO_LOWERING = (signal.ConjugateOp, signal.ComplexNormSqOp, signal.ComplexNormSqBackwardOp)
"""Ops whose rule is a located refusal: backend tests have no case for them (fft has cases
on the real layout)."""

COMPLEX_REFUSAL = (
    "no lowering to linalg: the lowered IR has no complex<f32> values "
    "(the interpreter, rlx-run's default backend, runs it)"
)


@LOWERINGS.register(*NO_LOWERING)
def no_lowering(lw: Lowering, op: signal.ConjugateOp) -> Sequence[SSAValue]:
    raise LoweringError(COMPLEX_REFUSAL)


def dft_matrix(n: int, inverse: bool, norm: signal.FftNorm) -> np.ndarray:
    """The real `[2N, 2N]` matrix of the DFT on interleaved `(re, im)` pairs: row `2k + c`
    holds output k's real (c = 0) or imaginary (c = 1) part as a sum over the inputs."""
    k = np.arange(n)
    w = np.exp((1j if inverse else -1j) * 2 * np.pi * np.outer(k, k) / n)
    scaled = {signal.FftNorm.ORTHO: 1 / math.sqrt(n), signal.FftNorm.BACKWARD: 1 / n if inverse else 1,
              signal.FftNorm.FORWARD: 1 if inverse else 1 / n}[norm]  # fmt: skip
    w = w * scaled
    m = np.empty((2 * n, 2 * n))
    m[0::2, 0::2], m[0::2, 1::2] = w.real, -w.imag
    m[1::2, 0::2], m[1::2, 1::2] = w.imag, w.real
    return m


@LOWERINGS.register(signal.FftOp)
def lower_fft(lw: Lowering, op: signal.FftOp) -> Sequence[SSAValue]:
    """The real layout with a static last dim: `x @ M^T` with M = `dft_matrix` (in the
    accumulation dtype, rounded once)."""
    if lw.operand_dtype(0).kind == "complex":
        raise LoweringError(COMPLEX_REFUSAL)
    width = op.input.type.get_shape()[-1]
    if width == DYNAMIC:
        raise LoweringError("fft on the real layout needs a static last dim (the DFT matrix is a constant)")
    dt = lw.result_dtype()
    acc = accumulator(dt)
    matrix = dft_matrix(width // 2, op.is_inverse, op.norm_kind).astype(acc.numpy)
    m = lw.emit(arith.ConstantOp(numpy_to_dense(matrix, acc.element_type)))
    lead = lw.dims(op.input)[:-1]
    n = len(lead)
    operands = [(op.input, dt, [*range(n), n + 1]), (m, acc, [n, n + 1])]
    return [contract(lw, operands, [*lead, width, width], [n + 1], dt)]


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
