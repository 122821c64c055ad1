"""numpy semantics of MIR complex and signal ops: conjugate, complex_norm_sq (+backward), fft,
log_mel (+backward; products and logs in the accumulation dtype, f32 for halves).

Transforms are computed in complex128 (numpy.fft's own precision) and rounded once
to the result dtype; the real layout is viewed as complex pairs and back.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import signal
from rlx_xdsl.interpreters.common import result_dtype, widened
from rlx_xdsl.numerics import convert


def run_conjugate(op: signal.ConjugateOp, z) -> tuple[np.ndarray]:
    return (np.conjugate(z),)


def run_complex_norm_sq(op: signal.ComplexNormSqOp, z) -> tuple[np.ndarray]:
    re, im = z.real.astype(np.float32), z.imag.astype(np.float32)
    return (re * re + im * im,)


def run_complex_norm_sq_backward(op: signal.ComplexNormSqBackwardOp, z, g) -> tuple[np.ndarray]:
    return ((2 * g * np.conjugate(z)).astype(result_dtype(op)),)


def interleaved_to_complex(x: np.ndarray) -> np.ndarray:
    """`[..., 2N]` reals holding `(re, im)` pairs as `[..., N]` complex128."""
    pairs = x.astype(np.float64).reshape(*x.shape[:-1], -1, 2)
    return pairs[..., 0] + 1j * pairs[..., 1]


def complex_to_interleaved(z: np.ndarray) -> np.ndarray:
    return np.stack([z.real, z.imag], axis=-1).reshape(*z.shape[:-1], 2 * z.shape[-1])


def run_fft(op: signal.FftOp, x) -> tuple[np.ndarray]:
    transform = np.fft.ifft if op.is_inverse else np.fft.fft
    norm = str(op.norm_kind)
    if np.iscomplexobj(x):
        out = transform(x.astype(np.complex128), axis=-1, norm=norm)
    else:
        out = complex_to_interleaved(transform(interleaved_to_complex(x), axis=-1, norm=norm))
    return (convert(out, result_dtype(op)),)


def run_log_mel(op: signal.LogMelOp, spectrum, filters) -> tuple[np.ndarray]:
    mel = widened(spectrum) @ widened(filters)
    return (convert(np.log10(np.maximum(mel, mel.dtype.type(op.eps.value.data))), result_dtype(op)),)


def run_log_mel_backward(op: signal.LogMelBackwardOp, spectrum, filters, dy) -> tuple[np.ndarray]:
    w = widened(filters)
    mel = widened(spectrum) @ w
    kept = mel >= mel.dtype.type(op.eps.value.data)
    inner = np.where(kept, widened(dy) / (np.where(kept, mel, 1) * np.log(mel.dtype.type(10))), 0)
    return (convert(inner @ w.T, result_dtype(op)),)


KERNELS = {
    signal.ConjugateOp: run_conjugate,
    signal.ComplexNormSqOp: run_complex_norm_sq,
    signal.ComplexNormSqBackwardOp: run_complex_norm_sq_backward,
    signal.FftOp: run_fft,
    signal.LogMelOp: run_log_mel,
    signal.LogMelBackwardOp: run_log_mel_backward,
}
