"""VJP rules of conjugate, complex_norm_sq (+backward), fft and log_mel, in JAX's convention.

A complex cotangent is pulled back by the *transpose* of the derivative (what
`jax.vjp` returns), not by its conjugate transpose as RLX does: a holomorphic op
needs no conjugation, an anti-holomorphic one (`conj`) conjugates, and a real
operand of a complex op gets the real part (`unbroadcast`'s cast does that).
"""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import cast_to, element_type, scalar
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Cotangents, Gradients, always
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.signal import (
    ComplexNormSqBackwardOp,
    ComplexNormSqOp,
    ConjugateOp,
    FftNorm,
    FftOp,
    LogMelBackwardOp,
    LogMelOp,
    is_complex,
)
from rlx_xdsl.ir.emitter import Emitter

ADJOINT_NORM = {FftNorm.BACKWARD: FftNorm.FORWARD, FftNorm.FORWARD: FftNorm.BACKWARD, FftNorm.ORTHO: FftNorm.ORTHO}
"""The norm of the adjoint transform: the `1/N` scale moves to the other direction."""


@VJP_RULES.register(ConjugateOp)
def conjugate(e: Emitter, op: ConjugateOp, cotangents: Cotangents) -> Gradients:
    """`conj` is anti-holomorphic: the cotangent is conjugated."""
    return [e.mir.conjugate(cotangents[0])]


@VJP_RULES.register(ComplexNormSqOp)
def complex_norm_sq(e: Emitter, op: ComplexNormSqOp, cotangents: Cotangents) -> Gradients:
    """`complex_norm_sq_backward(z, g) = 2 g conj(z)`."""
    return [e.mir.complex_norm_sq_backward(op.input, cotangents[0])]


@VJP_RULES.register(ComplexNormSqBackwardOp)
def complex_norm_sq_backward(e: Emitter, op: ComplexNormSqBackwardOp, cotangents: Cotangents) -> Gradients:
    """`2 g conj(z)`: to z (anti-holomorphic) `2 g conj(c)`, to the real g `Re(2 c conj(z))`."""
    (c,) = cotangents
    return [
        lambda: e.mir.complex_norm_sq_backward(c, op.g),
        lambda: cast_to(e, e.mir.mul(e.mir.mul(c, e.mir.conjugate(op.z)), scalar(e, 2, c)), element_type(op.g)),
    ]


@VJP_RULES.register(FftOp)
def fft(e: Emitter, op: FftOp, cotangents: Cotangents) -> Gradients:
    """On complex values the DFT matrix is symmetric, so its transpose is the same
    transform; on RLX's real layout the transpose of the real map is the adjoint
    transform (the other direction, the scale moved: RLX's rule)."""
    (g,) = cotangents
    if is_complex(tensor_type(op.input)):
        return [e.mir.fft(g, inverse=op.is_inverse, norm=op.norm_kind)]
    return [e.mir.fft(g, inverse=not op.is_inverse, norm=ADJOINT_NORM[op.norm_kind])]


@VJP_RULES.register(LogMelOp)
def log_mel(e: Emitter, op: LogMelOp, cotangents: Cotangents) -> Gradients:
    """`log_mel_backward` for the spectrum (RLX's rule); for the filters (RLX gives none)
    `spectrum^T @ inner` summed over the frames, `inner = g [m >= eps] / (max(m, eps) ln 10)`."""
    (g,) = cotangents
    eps = op.eps.value.data

    def d_filters():
        mel = e.mir.matmul(op.spectrum, op.filters)
        kept = e.mir.where(e.mir.compare(mel, scalar(e, eps, mel), "ge"), g, scalar(e, 0, g))
        denominator = e.mir.mul(e.mir.max(mel, scalar(e, eps, mel)), scalar(e, math.log(10), mel))
        leading = list(range(tensor_type(op.spectrum).get_num_dims() - 1))
        inner = e.mir.div(kept, denominator)
        return e.mir.dot_general(op.spectrum, inner, lhs_contracting=leading, rhs_contracting=leading)

    return [lambda: e.mir.log_mel_backward(op.spectrum, op.filters, g, eps=eps), d_filters]


@VJP_RULES.register(LogMelBackwardOp)
def log_mel_backward(e: Emitter, op: LogMelBackwardOp, cotangents: Cotangents) -> Gradients:
    """The op is `inner Fᵀ` with `inner = kept dy / (mel ln 10)`, `mel = s F`, `kept = mel >= eps`
    (RLX has no rule). With `H = G F` (G the cotangent, `[..., n_freq]`) and
    `d_mel = -H inner / mel` (kept cells): dy gets `kept H / (mel ln 10)`, the spectrum
    `d_mel Fᵀ`, the filters `sᵀ d_mel + Gᵀ inner` summed over the frames."""
    (g,) = cotangents
    eps = op.eps.value.data
    mel = e.mir.matmul(op.spectrum, op.filters)
    kept = e.mir.compare(mel, scalar(e, eps, mel), "ge")
    safe_mel = e.mir.where(kept, mel, scalar(e, 1, mel))  # no division by a dropped 0
    denominator = e.mir.mul(safe_mel, scalar(e, math.log(10), mel))
    h = e.mir.matmul(g, op.filters)
    leading = list(range(tensor_type(op.spectrum).get_num_dims() - 1))

    def over_frames(lhs: SSAValue, rhs: SSAValue) -> SSAValue:
        return e.mir.dot_general(lhs, rhs, lhs_contracting=leading, rhs_contracting=leading)

    def d_mel() -> tuple[SSAValue, SSAValue]:
        """`inner` and the cotangent of `mel`."""
        inner = e.mir.div(e.mir.where(kept, op.dy, scalar(e, 0, op.dy)), denominator)
        return inner, e.mir.neg(e.mir.div(e.mir.mul(h, inner), safe_mel))

    def d_filters() -> SSAValue:
        inner, dm = d_mel()
        return e.mir.add(over_frames(op.spectrum, dm), over_frames(g, inner))

    return [
        lambda: e.mir.matmul(d_mel()[1], e.mir.transpose(op.filters, perm=[1, 0])),
        d_filters,
        lambda: e.mir.where(kept, e.mir.div(h, denominator), scalar(e, 0, h)),
    ]


COMPLEX_RULES.register(ConjugateOp, ComplexNormSqOp, ComplexNormSqBackwardOp, FftOp)(always)
