"""JVP rules of constants, casts, selects, comparisons, binary ops and activations.

Binary ops broadcast and promote: each operand's contribution is brought to the
result's shape and dtype (`to_result`). Activations reuse the backward kernel:
`f'(x) * t` is `activation_backward(x, t)`, the same elementwise product as the
reverse rule's `g * f'(x)`, so both modes share one derivative per kind
(RLX's forward rules for gelu and gelu_approx differ from its reverse ones and
are wrong: docs/deviations.md).
"""

from __future__ import annotations

from xdsl.ir import Operation

from rlx_xdsl.autodiff.emit import add_tangents, element_type, scalar, to_result
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents, zero_tangent
from rlx_xdsl.autodiff.rules.mir import elementwise as vjp
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.ir.emitter import Emitter

JVP_RULES.register(ew.ConstantOp, ew.IotaOp, ew.CompareOp)(zero_tangent)

JVP_RULES.register(ew.RoundOp)(zero_tangent)
"""`round` is piecewise constant: tangent 0, consistent with its VJP rule (RLX's reverse
rule passes the gradient straight through while its forward rule gives 0)."""


# relu and the activations: a diagonal Jacobian, so the reverse rules (the backward
# kernels, `f'(x) * v`) are the forward rules too.
JVP_RULES.add(ew.ReluOp, vjp.relu)
for _op in ew.ACTIVATION_OPS:
    if _op not in (ew.ReluOp, ew.RoundOp):
        JVP_RULES.add(_op, vjp.activation)


@JVP_RULES.register(ew.CastOp)
def cast(e: Emitter, op: ew.CastOp, tangents: Tangents) -> OutTangents:
    return [e.mir.cast(tangents[0], element_type(op.result))]


@JVP_RULES.register(ew.WhereOp)
def where(e: Emitter, op: ew.WhereOp, tangents: Tangents) -> OutTangents:
    """The selected branch's tangent (a zero branch tangent selects a scalar zero)."""
    _, t_true, t_false = tangents
    zero = scalar(e, 0, op.result)
    return [to_result(e, e.mir.where(op.cond, t_true or zero, t_false or zero), op.result)]


@JVP_RULES.register(ew.AddOp)
def add(e: Emitter, op: ew.AddOp, tangents: Tangents) -> OutTangents:
    t_lhs, t_rhs = tangents
    return [to_result(e, add_tangents(e, t_lhs, t_rhs), op.result)]


@JVP_RULES.register(ew.SubOp)
def sub(e: Emitter, op: ew.SubOp, tangents: Tangents) -> OutTangents:
    t_lhs, t_rhs = tangents
    if t_rhs is None:
        return [to_result(e, t_lhs, op.result)]
    diff = e.mir.neg(t_rhs) if t_lhs is None else e.mir.sub(t_lhs, t_rhs)
    return [to_result(e, diff, op.result)]


@JVP_RULES.register(ew.MulOp)
def mul(e: Emitter, op: ew.MulOp, tangents: Tangents) -> OutTangents:
    t_lhs, t_rhs = tangents
    total = add_tangents(e, t_lhs and e.mir.mul(t_lhs, op.rhs), t_rhs and e.mir.mul(op.lhs, t_rhs))
    return [to_result(e, total, op.result)]


@JVP_RULES.register(ew.DivOp)
def div(e: Emitter, op: ew.DivOp, tangents: Tangents) -> OutTangents:
    """`d(a/b) = (da - (a/b) db) / b`."""
    t_lhs, t_rhs = tangents
    numerator = add_tangents(e, t_lhs, t_rhs and e.mir.neg(e.mir.mul(op.result, t_rhs)))
    return [to_result(e, e.mir.div(numerator, op.rhs), op.result)]


def _chooser(e: Emitter, op: Operation, tangents: Tangents, wins: str) -> OutTangents:
    """max/min: the chosen operand's tangent; at a tie the mean of both (as the VJP rule)."""
    lhs, rhs = op.operands
    t_lhs, t_rhs = tangents
    result = op.results[0]
    zero = scalar(e, 0, result)
    t_lhs, t_rhs = t_lhs or zero, t_rhs or zero
    half = e.mir.mul(e.mir.add(t_lhs, t_rhs), scalar(e, 0.5, result))
    chosen = e.mir.where(
        e.mir.compare(lhs, rhs, wins),
        t_lhs,
        e.mir.where(e.mir.compare(lhs, rhs, "eq"), half, t_rhs),
    )
    return [to_result(e, chosen, result)]


@JVP_RULES.register(ew.MaxOp)
def maximum(e: Emitter, op: ew.MaxOp, tangents: Tangents) -> OutTangents:
    return _chooser(e, op, tangents, "gt")


@JVP_RULES.register(ew.MinOp)
def minimum(e: Emitter, op: ew.MinOp, tangents: Tangents) -> OutTangents:
    return _chooser(e, op, tangents, "lt")


@JVP_RULES.register(ew.PowOp)
def power(e: Emitter, op: ew.PowOp, tangents: Tangents) -> OutTangents:
    """`d(a^b) = b a^(b-1) da + a^b ln(a) db`, with the VJP rule's conventions at b = 0 and a = 0."""
    t_a, t_b = tangents
    a, b = op.lhs, op.rhs
    d_base = d_exponent = None
    if t_a is not None:
        slope = e.mir.mul(b, e.mir.pow(a, e.mir.sub(b, scalar(e, 1, b))))
        slope = e.mir.where(e.mir.compare(b, scalar(e, 0, b), "eq"), scalar(e, 0, op.result), slope)
        d_base = e.mir.mul(slope, t_a)
    if t_b is not None:
        safe_base = e.mir.where(e.mir.compare(a, scalar(e, 0, a), "eq"), scalar(e, 1, a), a)
        d_exponent = e.mir.mul(e.mir.mul(op.result, e.mir.log(safe_base)), t_b)
    return [to_result(e, add_tangents(e, d_base, d_exponent), op.result)]
