"""Activations: Relu, Sigmoid, Tanh, Gelu, LeakyRelu, Clip, HardSigmoid, Softplus, Elu."""

from __future__ import annotations

from rlx_xdsl.importers.onnx.table import rule


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
    """`log(1 + exp(x))` as `max(x, 0) + log(1 + exp(-|x|))`, which does not overflow."""
    x = t.value(0)
    one = t.constant(1, t.dtype(x))
    tail = t.e.mir.log(t.e.mir.add(one, t.e.mir.exp(t.e.mir.neg(t.e.mir.abs(x)))))
    return t.e.mir.add(t.e.mir.relu(x), tail)


@rule("Elu")
def elu(t, node):
    x = t.value(0)
    dtype = t.dtype(x)
    negative = t.e.mir.mul(t.constant(t.attr("alpha", 1.0), dtype), t.e.mir.sub(t.e.mir.exp(x), t.constant(1, dtype)))
    return t.e.mir.where(t.e.mir.compare(x, t.constant(0, dtype), "gt"), x, negative)
