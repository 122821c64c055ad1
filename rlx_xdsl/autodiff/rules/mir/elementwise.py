"""VJP rules of constants, casts, selects, comparisons, binary ops and activations.

Binary ops broadcast and promote their operands, so every operand gradient goes
through `unbroadcast` (sum over broadcast axes, cast back to the operand's dtype).
"""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.autodiff.emit import cast_to, element_type, scalar, unbroadcast
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Cotangents, Gradients, always, no_gradient
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.ir.emitter import Emitter

VJP_RULES.register(ew.ConstantOp, ew.IotaOp, ew.CompareOp)(no_gradient)

VJP_RULES.register(ew.RoundOp)(no_gradient)
"""`round` is piecewise constant: its derivative is 0 wherever it has one (as in JAX).
RLX passes the gradient straight through; `x + stop_gradient(round(x) - x)` does that."""


@VJP_RULES.register(ew.ReluOp)
def relu(e: Emitter, op: ew.ReluOp, cotangents: Cotangents) -> Gradients:
    """`mir.relu_backward`: the gradient where `x > 0`."""
    return [e.mir.relu_backward(op.input, cotangents[0])]


def activation(e: Emitter, op: ew.UnaryOperation, cotangents: Cotangents) -> Gradients:
    """`mir.activation_backward` of the op's kind: `g * f'(x)` in one kernel (RLX's rule)."""
    return [e.mir.activation_backward(op.input, cotangents[0], kind=op.KIND)]


for _op in ew.ACTIVATION_OPS:
    if _op not in (ew.ReluOp, ew.RoundOp):
        VJP_RULES.add(_op, activation)


@VJP_RULES.register(ew.CastOp)
def cast(e: Emitter, op: ew.CastOp, cotangents: Cotangents) -> Gradients:
    """Cast the gradient back to the input's dtype."""
    (g,) = cotangents
    return [cast_to(e, g, element_type(op.input))]


@VJP_RULES.register(ew.WhereOp)
def where(e: Emitter, op: ew.WhereOp, cotangents: Cotangents) -> Gradients:
    """Each branch gets the gradient where it was selected, zeros elsewhere.

    The zero is a scalar of the gradient's own dtype (RLX sizes it at 4 bytes
    per element whatever the dtype).
    """
    (g,) = cotangents
    return [
        None,
        lambda: unbroadcast(e, e.mir.where(op.cond, g, scalar(e, 0, g)), op.on_true),
        lambda: unbroadcast(e, e.mir.where(op.cond, scalar(e, 0, g), g), op.on_false),
    ]


@VJP_RULES.register(ew.AddOp)
def add(e: Emitter, op: ew.AddOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    return [lambda: unbroadcast(e, g, op.lhs), lambda: unbroadcast(e, g, op.rhs)]


@VJP_RULES.register(ew.SubOp)
def sub(e: Emitter, op: ew.SubOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    return [lambda: unbroadcast(e, g, op.lhs), lambda: unbroadcast(e, e.mir.neg(g), op.rhs)]


@VJP_RULES.register(ew.MulOp)
def mul(e: Emitter, op: ew.MulOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    return [
        lambda: unbroadcast(e, e.mir.mul(g, op.rhs), op.lhs),
        lambda: unbroadcast(e, e.mir.mul(g, op.lhs), op.rhs),
    ]


@VJP_RULES.register(ew.DivOp)
def div(e: Emitter, op: ew.DivOp, cotangents: Cotangents) -> Gradients:
    """`d(a/b) = da / b - db * (a/b) / b`."""
    (g,) = cotangents
    return [
        lambda: unbroadcast(e, e.mir.div(g, op.rhs), op.lhs),
        lambda: unbroadcast(e, e.mir.neg(e.mir.mul(e.mir.div(g, op.rhs), op.result)), op.rhs),
    ]


COMPLEX_RULES.register(ew.AddOp, ew.SubOp, ew.MulOp, ew.DivOp, ew.CastOp)(always)
"""Holomorphic (or, for cast, real-linear) and free of conjugation: JAX's rules
(`tests/autodiff/test_complex.py` checks them against `jax.vjp`)."""


def _chooser(e: Emitter, op: Operation, g: SSAValue, wins: str) -> Gradients:
    """Gradients of max/min: the operand that is chosen gets `g`; a tie splits it in halves.

    At a tie `max(a, b)` is not differentiable, but its one-sided derivatives
    along `a` are 1 and 0, and their mean 1/2 is what a central difference
    measures (and what JAX gives); RLX sends the whole gradient to `a`.
    """
    lhs, rhs = op.operands
    share = e.mir.where(
        e.mir.compare(lhs, rhs, wins),
        scalar(e, 1, g),
        e.mir.where(e.mir.compare(lhs, rhs, "eq"), scalar(e, 0.5, g), scalar(e, 0, g)),
    )
    to_lhs = e.mir.mul(g, share)
    return [unbroadcast(e, to_lhs, lhs), unbroadcast(e, e.mir.sub(g, to_lhs), rhs)]


@VJP_RULES.register(ew.MaxOp)
def maximum(e: Emitter, op: ew.MaxOp, cotangents: Cotangents) -> Gradients:
    return _chooser(e, op, cotangents[0], "gt")


@VJP_RULES.register(ew.MinOp)
def minimum(e: Emitter, op: ew.MinOp, cotangents: Cotangents) -> Gradients:
    return _chooser(e, op, cotangents[0], "lt")


@VJP_RULES.register(ew.PowOp)
def power(e: Emitter, op: ew.PowOp, cotangents: Cotangents) -> Gradients:
    """`d(a^b) = b a^(b-1) da + a^b ln(a) db`.

    Where `b = 0` the base's derivative is 0 (not `0 * a^-1`, NaN at `a = 0`);
    where `a = 0` the exponent's is 0 (`a^b ln a` tends to 0), as in JAX. RLX
    divides by `a` instead, which fails at 0.
    """
    (g,) = cotangents
    a, b = op.lhs, op.rhs

    def d_base() -> SSAValue:
        slope = e.mir.mul(b, e.mir.pow(a, e.mir.sub(b, scalar(e, 1, b))))
        slope = e.mir.where(e.mir.compare(b, scalar(e, 0, b), "eq"), scalar(e, 0, g), slope)
        return unbroadcast(e, e.mir.mul(g, slope), a)

    def d_exponent() -> SSAValue:
        safe_base = e.mir.where(e.mir.compare(a, scalar(e, 0, a), "eq"), scalar(e, 1, g), a)
        return unbroadcast(e, e.mir.mul(g, e.mir.mul(op.result, e.mir.log(safe_base))), b)

    return [d_base, d_exponent]
