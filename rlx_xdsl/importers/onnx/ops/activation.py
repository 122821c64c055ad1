"""Activations: Relu, Sigmoid, Tanh, Gelu, LeakyRelu, Clip, HardSigmoid, Softplus, Elu."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


@rule("Relu", "Sigmoid", "Tanh")
def simple(t, node):
    return getattr(t.e.mir, node.op_type.lower())(t.value(0))


@rule("Gelu")
def gelu(t, node):
    op = t.e.mir.gelu_approx if t.attr("approximate", b"none") in (b"tanh", "tanh") else t.e.mir.gelu
    return op(t.value(0))


@rule("LeakyRelu")
def leaky_relu(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    negative = t.e.mir.mul(x, t.constant(t.attr("alpha", 0.01), dtype))
    return t.e.mir.where(t.e.mir.compare(x, t.constant(0, dtype), "ge"), x, negative)


@rule("Clip")
def clip(t, node):
    x = t.value(0)
    if t.input(1) is not None:
        x = t.e.mir.max(x, t.value(1))
    if t.input(2) is not None:
        x = t.e.mir.min(x, t.value(2))
    return x


@rule("HardSigmoid")
def hard_sigmoid(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    y = t.e.mir.add(t.e.mir.mul(x, t.constant(t.attr("alpha", 0.2), dtype)), t.constant(t.attr("beta", 0.5), dtype))
    return t.e.mir.min(t.e.mir.max(y, t.constant(0, dtype)), t.constant(1, dtype))


@rule("Softplus")
def softplus(t, node):
    """`log(1 + exp(x))` as `max(x, 0) + log1p(exp(-|x|))`: no overflow for large x, and
    no rounding of `1 + exp(-|x|)` to 1 for very negative x (`Softplus(-20)` is 2.06e-9, not 0)."""
    x = t.value(0)
    tail = t.e.mir.log1p(t.e.mir.exp(t.e.mir.neg(t.e.mir.abs(x))))
    return t.e.mir.add(t.e.mir.relu(x), tail)


@rule("Elu")
def elu(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    negative = t.e.mir.mul(t.constant(t.attr("alpha", 1.0), dtype), t.e.mir.expm1(x))  # precise near 0
    return t.e.mir.where(t.e.mir.compare(x, t.constant(0, dtype), "gt"), x, negative)


@rule("PRelu")
def prelu(t, node):
    x = t.value(0)
    negative = t.e.mir.mul(x, t.value(1))
    return t.e.mir.where(t.e.mir.compare(x, t.constant(0, t.dtype(x)), "lt"), negative, x)


@rule("HardSwish")
def hard_swish(t, node):
    """`x * max(0, min(1, x / 6 + 1/2))`."""
    x = t.value(0)
    dtype = t.dtype(x)
    gate = t.e.mir.add(t.e.mir.mul(x, t.constant(1 / 6, dtype)), t.constant(0.5, dtype))
    gate = t.e.mir.min(t.e.mir.max(gate, t.constant(0, dtype)), t.constant(1, dtype))
    return t.e.mir.mul(x, gate)


@rule("Softsign")
def softsign(t, node):
    x = t.value(0)
    return t.e.mir.div(x, t.e.mir.add(t.constant(1, t.dtype(x)), t.e.mir.abs(x)))


@rule("Dropout")
def dropout(t, node):
    """Inference, or training with a constant ratio of 0: the identity (a training-mode
    Dropout that drops is random, and refused)."""
    training = t.static(2, "training_mode") if t.input(2) is not None else None
    if training is not None and bool(np.asarray(training).reshape(())):
        ratio = t.static(1, "ratio") if t.input(1) is not None else np.array(0.5)
        if float(np.asarray(ratio).reshape(())) != 0.0:
            raise t.fail("Dropout in training mode is not supported")
    x = t.value(0)
    if len(node.output) > 1 and node.output[1]:  # nothing is dropped: an all-true mask
        if DYNAMIC in t.shape(x):
            raise t.fail("the mask output of Dropout of a dynamic shape is not supported")
        return [x, t.constant(np.ones(t.shape(x), dtype=bool), "i1")]
    return x


@rule("Swish")
def swish(t, node):
    """`x * sigmoid(alpha * x)` (opset 24)."""
    x = t.value(0)
    return t.e.mir.mul(x, t.e.mir.sigmoid(t.e.mir.mul(x, t.constant(t.attr("alpha", 1.0), t.dtype(x)))))


@rule("Selu", "Celu")
def selu_celu(t, node):
    """Selu: `gamma * (x if x > 0 else alpha * (exp(x) - 1))`;
    Celu: `max(0, x) + min(0, alpha * (exp(x / alpha) - 1))`."""
    x = t.value(0)
    dtype = t.dtype(x)
    e = t.e.mir
    positive = e.compare(x, t.constant(0, dtype), "gt")
    if node.op_type == "Selu":
        alpha, gamma = t.attr("alpha", 1.67326319217681884765625), t.attr("gamma", 1.05070102214813232421875)
        negative = e.mul(t.constant(alpha, dtype), e.expm1(x))
        return e.mul(t.constant(gamma, dtype), e.where(positive, x, negative))
    alpha = t.attr("alpha", 1.0)
    negative = e.mul(t.constant(alpha, dtype), e.expm1(e.div(x, t.constant(alpha, dtype))))
    return e.where(positive, x, negative)


@rule("ThresholdedRelu")
def thresholded_relu(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    above = t.e.mir.compare(x, t.constant(t.attr("alpha", 1.0), dtype), "gt")
    return t.e.mir.where(above, x, t.constant(0, dtype))


@rule("Mish")
def mish(t, node):
    """`x * tanh(softplus(x))`, the softplus as `Softplus`'s."""
    x = t.value(0)
    tail = t.e.mir.log1p(t.e.mir.exp(t.e.mir.neg(t.e.mir.abs(x))))
    return t.e.mir.mul(x, t.e.mir.tanh(t.e.mir.add(t.e.mir.relu(x), tail)))


@rule("Shrink")
def shrink(t, node):
    """`x + bias` below `-lambd`, `x - bias` above `lambd`, 0 between."""
    x = t.value(0)
    dtype = t.dtype(x)
    e = t.e.mir
    lambd, bias = t.attr("lambd", 0.5), t.attr("bias", 0.0)
    below = e.compare(x, t.constant(-lambd, dtype), "lt")
    above = e.compare(x, t.constant(lambd, dtype), "gt")
    zero = t.constant(0, dtype)
    return e.where(below, e.add(x, t.constant(bias, dtype)), e.where(above, e.sub(x, t.constant(bias, dtype)), zero))
