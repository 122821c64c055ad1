"""Decompositions of `relu_backward` and `activation_backward`: `dy * f'(x)` from primitives.

Each derivative is built from `x` alone and has x's shape, so `dy * f'(x)`
takes the kernel's result type even when one of x and dy knows a dim the other
leaves `?`. The exact gelu derivative needs the normal CDF, which MIR has no op
for; it comes from gelu itself: `Phi(x) = gelu(x) / x`.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.backward import ActivationBackwardOp, ReluBackwardOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS
from rlx_xdsl.transforms.decompose_backward.emit import (
    dtype_of,
    filled,
    keep_where,
    scalar,
)

Derivative = Callable[[Emitter, SSAValue], SSAValue]


def is_positive(e: Emitter, x: SSAValue) -> SSAValue:
    return e.mir.compare(x, scalar(e, 0.0, x), "gt")


def indicator(e: Emitter, x: SSAValue, predicate: str) -> SSAValue:
    """1 where `x <predicate> 0`, else 0, in x's dtype."""
    return e.mir.cast(e.mir.compare(x, scalar(e, 0.0, x), predicate), dtype_of(x))


def one_minus(e: Emitter, value: SSAValue) -> SSAValue:
    return e.mir.sub(scalar(e, 1.0, value), value)


def gelu_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    """`Phi(x) + x phi(x)`, with `Phi(x) = gelu(x) / x` (1/2 at x = 0): gelu keeps Phi's
    digits in the negative tail, where `1/2 + (gelu(x) + gelu(-x)) / 2x` cancelled to
    nothing (below x = -6) and `2x` overflowed past half the dtype's largest value."""
    cdf = e.mir.div(e.mir.gelu(x), x)
    at_zero = e.mir.compare(x, scalar(e, 0.0, x), "eq")
    cdf = e.mir.where(at_zero, scalar(e, 0.5, x), cdf)
    density = e.mir.mul(
        e.mir.exp(e.mir.mul(scalar(e, -0.5, x), e.mir.mul(x, x))), scalar(e, 1 / math.sqrt(2 * math.pi), x)
    )
    return e.mir.add(cdf, e.mir.mul(x, density))


GELU_C = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715


def gelu_approx_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    """With `u = c (x + k x^3)`, `s = sigmoid(2u)` and `1 - s = sigmoid(-2u)`:
    `s + 2 x s (1 - s) c (1 + 3 k x^2)`, and `s` where `s (1 - s)` is 0 (x^3 may overflow
    there); `(1 + tanh u) / 2` cancelled to nothing below x = -5."""
    square = e.mir.mul(x, x)
    inner = e.mir.mul(
        scalar(e, GELU_C, x), e.mir.add(x, e.mir.mul(scalar(e, GELU_K, x), e.mir.mul(square, x)))
    )
    two_u = e.mir.mul(scalar(e, 2.0, x), inner)
    s = e.mir.sigmoid(two_u)
    slope = e.mir.mul(s, e.mir.sigmoid(e.mir.neg(two_u)))
    du = e.mir.mul(scalar(e, 2 * GELU_C, x), e.mir.add(scalar(e, 1.0, x), e.mir.mul(scalar(e, 3 * GELU_K, x), square)))
    full = e.mir.add(s, e.mir.mul(e.mir.mul(x, slope), du))
    return e.mir.where(e.mir.compare(slope, scalar(e, 0.0, x), "eq"), s, full)


def silu_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    s = e.mir.sigmoid(x)
    return e.mir.mul(s, e.mir.add(scalar(e, 1.0, x), e.mir.mul(x, one_minus(e, s))))


def sigmoid_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    s = e.mir.sigmoid(x)
    return e.mir.mul(s, one_minus(e, s))


def tanh_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    t = e.mir.tanh(x)
    return one_minus(e, e.mir.mul(t, t))


def sqrt_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    """`1 / (2 sqrt x)` for `x > 0`, else 0 (RLX's mask)."""
    return keep_where(e, is_positive(e, x), e.mir.div(scalar(e, 0.5, x), e.mir.sqrt(x)))


def rsqrt_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    """`-x^(-3/2) / 2` for `x > 0`, else 0 (RLX's mask)."""
    value = e.mir.div(scalar(e, -0.5, x), e.mir.mul(x, e.mir.sqrt(x)))
    return keep_where(e, is_positive(e, x), value)


def tan_derivative(e: Emitter, x: SSAValue) -> SSAValue:
    t = e.mir.tan(x)
    return e.mir.add(scalar(e, 1.0, x), e.mir.mul(t, t))


DERIVATIVES: dict[Activation, Derivative] = {
    Activation.GELU: gelu_derivative,
    Activation.GELU_APPROX: gelu_approx_derivative,
    Activation.SILU: silu_derivative,
    Activation.RELU: lambda e, x: indicator(e, x, "gt"),
    Activation.SIGMOID: sigmoid_derivative,
    Activation.TANH: tanh_derivative,
    Activation.EXP: lambda e, x: e.mir.exp(x),
    Activation.LOG: lambda e, x: e.mir.div(scalar(e, 1.0, x), x),
    Activation.SQRT: sqrt_derivative,
    Activation.RSQRT: rsqrt_derivative,
    Activation.NEG: lambda e, x: filled(e, -1.0, x),
    Activation.ABS: lambda e, x: e.mir.sub(indicator(e, x, "gt"), indicator(e, x, "lt")),
    Activation.SIN: lambda e, x: e.mir.cos(x),
    Activation.COS: lambda e, x: e.mir.neg(e.mir.sin(x)),
    Activation.TAN: tan_derivative,
    Activation.ATAN: lambda e, x: e.mir.div(scalar(e, 1.0, x), e.mir.add(scalar(e, 1.0, x), e.mir.mul(x, x))),
    Activation.ROUND: lambda e, x: filled(e, 1.0, x),  # straight-through, as the kernel
    Activation.LOG1P: lambda e, x: e.mir.div(scalar(e, 1.0, x), e.mir.add(scalar(e, 1.0, x), x)),
    Activation.EXPM1: lambda e, x: e.mir.exp(x),
    Activation.ERF: lambda e, x: e.mir.mul(scalar(e, 2.0 / math.sqrt(math.pi), x), e.mir.exp(e.mir.neg(e.mir.mul(x, x)))),
}
"""`f'(x)` of each activation as primitives; they follow the kernel's conventions."""


@DECOMPOSITIONS.register(ReluBackwardOp)
def relu_backward(e: Emitter, op: ReluBackwardOp) -> SSAValue:
    """`where(x > 0, dy, 0)`."""
    return e.mir.where(is_positive(e, op.x), op.dy, scalar(e, 0.0, op.dy))


@DECOMPOSITIONS.register(ActivationBackwardOp)
def activation_backward(e: Emitter, op: ActivationBackwardOp) -> SSAValue:
    return e.mir.mul(op.dy, DERIVATIVES[op.activation](e, op.x))
