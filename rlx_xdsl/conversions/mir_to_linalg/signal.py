"""Lowering of MIR complex and signal ops.

log_mel and its backward are a contraction (`spectrum @ filters`, accumulated as the
interpreter does) and elementwise generics. `fft` on RLX's real layout with a static
length is a DFT: one contraction with a constant `[2N, 2N]` real matrix (O(N²), no
butterflies: linalg has no FFT); on complex<f32> it is the contraction with the
`[N, N]` complex DFT matrix. conjugate and complex_norm_sq(+backward) are elementwise
generics on the upstream `complex` dialect (`complex.conj`, `complex.re`/`im`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.contraction import contract
from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.dialects.mir import signal
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.dense import numpy_to_dense
from rlx_xdsl.shapes import DYNAMIC


@LOWERINGS.register(signal.ConjugateOp)
def lower_conjugate(lw: Lowering, op: signal.ConjugateOp) -> Sequence[SSAValue]:
    return [lw.map_elements([op.input], lw.dims(op.input), lw.result_dtype(), lambda s, z, _: s.conj(z))]


def _norm_sq(s: Scalars, z: SSAValue, part: DType) -> SSAValue:
    re, im = s.real_part(z), s.imag_part(z)
    return s.add(s.mul(re, re, part), s.mul(im, im, part), part)


@LOWERINGS.register(signal.ComplexNormSqOp)
def lower_complex_norm_sq(lw: Lowering, op: signal.ComplexNormSqOp) -> Sequence[SSAValue]:
    """`re² + im²`, in the parts' float type."""
    dt = lw.result_dtype()
    body = lambda s, z, _: _norm_sq(s, z, dt)
    return [lw.map_elements([op.input], lw.dims(op.input), dt, body)]


@LOWERINGS.register(signal.ComplexNormSqBackwardOp)
def lower_complex_norm_sq_backward(lw: Lowering, op: signal.ComplexNormSqBackwardOp) -> Sequence[SSAValue]:
    """`2 g conj(z)`, as the interpreter computes it."""
    dt, g_dt = lw.result_dtype(), lw.operand_dtype(1)

    def body(s: Scalars, z: SSAValue, g: SSAValue, _: SSAValue) -> SSAValue:
        scale = s.cast(s.mul(g, s.constant(2, g_dt), g_dt), g_dt, dt)
        return s.mul(scale, s.conj(z), dt)

    operands = list(op.operands)
    return [lw.map_elements(operands, lw.broadcast_dims(operands), dt, body)]


def complex_dft_matrix(n: int, inverse: bool, norm: signal.FftNorm) -> np.ndarray:
    """The `[N, N]` DFT matrix with the norm's scale: `fft(x) = W @ x`."""
    k = np.arange(n)
    w = np.exp((1j if inverse else -1j) * 2 * np.pi * np.outer(k, k) / n)
    scaled = {signal.FftNorm.ORTHO: 1 / math.sqrt(n), signal.FftNorm.BACKWARD: 1 / n if inverse else 1,
              signal.FftNorm.FORWARD: 1 if inverse else 1 / n}[norm]  # fmt: skip
    return w * scaled


def dft_matrix(n: int, inverse: bool, norm: signal.FftNorm) -> np.ndarray:
    """The real `[2N, 2N]` matrix of the DFT on interleaved `(re, im)` pairs: row `2k + c`
    holds output k's real (c = 0) or imaginary (c = 1) part as a sum over the inputs."""
    w = complex_dft_matrix(n, inverse, norm)
    m = np.empty((2 * n, 2 * n))
    m[0::2, 0::2], m[0::2, 1::2] = w.real, -w.imag
    m[1::2, 0::2], m[1::2, 1::2] = w.imag, w.real
    return m


@LOWERINGS.register(signal.FftOp)
def lower_fft(lw: Lowering, op: signal.FftOp) -> Sequence[SSAValue]:
    """A static last dim: `x @ M^T` with M = `complex_dft_matrix` on complex<f32>, or
    `dft_matrix` on the real layout (in the accumulation dtype, rounded once)."""
    width = op.input.type.get_shape()[-1]
    dt = lw.result_dtype()
    is_complex = dt.kind == "complex"
    if width == DYNAMIC:
        layout = "" if is_complex else " on the real layout"
        raise LoweringError(f"fft{layout} needs a static last dim (the DFT matrix is a constant)")
    acc = accumulator(dt)
    build = complex_dft_matrix if is_complex else dft_matrix
    matrix = build(width if is_complex else width // 2, op.is_inverse, op.norm_kind).astype(acc.numpy)
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
