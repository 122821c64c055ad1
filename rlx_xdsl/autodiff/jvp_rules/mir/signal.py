"""JVP rules of conjugate, complex_norm_sq (+backward), fft and log_mel (+backward).

Complex values follow JAX's convention: a tangent is pushed by the real-linear
derivative, so `conj` conjugates it, the holomorphic fft maps it, and the real
`|z|²` gets `2 Re(conj(z) t)`. `complex_norm_sq_backward(z, g) = 2 g conj(z)` is
real-bilinear in (z, g). log_mel is `log10(max(s F, eps))`: with `mel = s F` and
`kept = mel >= eps` (the reverse rule's test), `t = kept (t_s F + s t_F) / (mel ln 10)`.
"""

from __future__ import annotations

import math

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import add_tangents, cast_to, element_type, scalar
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import linear_in, linear_rule
from rlx_xdsl.dialects.mir.signal import (
    ComplexNormSqBackwardOp,
    ComplexNormSqOp,
    ConjugateOp,
    FftOp,
    LogMelBackwardOp,
    LogMelOp,
)
from rlx_xdsl.ir.emitter import Emitter

JVP_RULES.register(ConjugateOp)(linear_rule(0))
JVP_RULES.register(FftOp)(linear_rule(0))
JVP_RULES.register(ComplexNormSqBackwardOp)(linear_rule(0, 1))


@JVP_RULES.register(ComplexNormSqOp)
def complex_norm_sq(e: Emitter, op: ComplexNormSqOp, tangents: Tangents) -> OutTangents:
    """`2 Re(conj(z) t)`."""
    (t,) = tangents
    product = e.mir.mul(e.mir.mul(e.mir.conjugate(op.input), t), scalar(e, 2, t))
    return [cast_to(e, product, element_type(op.result))]


class MelTerms:
    """What log_mel's tangents share: `mel = s F`, the kept cells and `mel ln 10` there."""

    def __init__(self, e: Emitter, op: LogMelOp | LogMelBackwardOp):
        self.e, self.op = e, op
        mel = e.mir.matmul(op.spectrum, op.filters)
        self.kept = e.mir.compare(mel, scalar(e, op.eps.value.data, mel), "ge")
        self.safe_mel = e.mir.where(self.kept, mel, scalar(e, 1, mel))  # no division by a dropped 0
        self.denominator = e.mir.mul(self.safe_mel, scalar(e, math.log(10), mel))

    def masked(self, value: SSAValue) -> SSAValue:
        return self.e.mir.where(self.kept, value, scalar(self.e, 0, value))

    def mel_tangent(self, t_s: SSAValue | None, t_f: SSAValue | None) -> SSAValue | None:
        e, op = self.e, self.op
        return add_tangents(e, t_s and e.mir.matmul(t_s, op.filters), t_f and e.mir.matmul(op.spectrum, t_f))


@JVP_RULES.register(LogMelOp)
def log_mel(e: Emitter, op: LogMelOp, tangents: Tangents) -> OutTangents:
    terms = MelTerms(e, op)
    return [terms.masked(e.mir.div(terms.mel_tangent(*tangents), terms.denominator))]


@JVP_RULES.register(LogMelBackwardOp)
def log_mel_backward(e: Emitter, op: LogMelBackwardOp, tangents: Tangents) -> OutTangents:
    """`op(s, F, t_dy) + t_inner Fᵀ + inner t_Fᵀ` for `inner = kept dy / (mel ln 10)`,
    `t_inner = -kept dy t_mel / (mel² ln 10)`."""
    t_s, t_f, _ = tangents
    smooth = None
    if t_s is not None or t_f is not None:
        terms = MelTerms(e, op)
        inner = terms.masked(e.mir.div(op.dy, terms.denominator))
        t_mel = terms.mel_tangent(t_s, t_f)
        t_inner = e.mir.neg(e.mir.div(e.mir.mul(inner, t_mel), terms.safe_mel))
        smooth = add_tangents(
            e,
            e.mir.matmul(t_inner, e.mir.transpose(op.filters, perm=[1, 0])),
            t_f and e.mir.matmul(inner, e.mir.transpose(t_f, perm=[1, 0])),
        )
    return [add_tangents(e, linear_in(e, op, tangents, 2), smooth)]
