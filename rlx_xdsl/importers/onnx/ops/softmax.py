"""Softmax and LogSoftmax along one axis (opset 13 semantics)."""

from __future__ import annotations

from rlx_xdsl.importers.onnx.table import rule


@rule("Softmax")
def softmax(t, node):
    return t.e.mir.softmax(t.value(0), axis=t.attr("axis", -1))


@rule("LogSoftmax")
def log_softmax(t, node):
    return log_softmax_along(t, t.value(0), t.attr("axis", -1))


def log_softmax_along(t, x, axis: int):
    """`s - log(sum(exp(s)))` with `s = x - max(x)` along `axis`."""
    shifted = t.e.mir.sub(x, t.e.mir.reduce(x, kind="max", axes=[axis], keep_dim=True))
    total = t.e.mir.reduce(t.e.mir.exp(shifted), kind="sum", axes=[axis], keep_dim=True)
    return t.e.mir.sub(shifted, t.e.mir.log(total))
