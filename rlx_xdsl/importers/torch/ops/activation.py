"""Activations: relu, gelu (exact and tanh), sigmoid, tanh, silu, clamps, leaky relu."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule

aten = torch.ops.aten


def _simple(op: str):
    def translate(t, node):
        return getattr(t.e.mir, op)(t.value(node.args[0]))

    return translate


for _op, _overload in {
    "relu": aten.relu.default,
    "sigmoid": aten.sigmoid.default,
    "tanh": aten.tanh.default,
    "silu": aten.silu.default,
}.items():
    rule(_overload)(_simple(_op))


@rule(aten.gelu.default)
def gelu(t, node):
    approximate = node.kwargs.get("approximate", node.args[1] if len(node.args) > 1 else "none")
    op = t.e.mir.gelu_approx if approximate == "tanh" else t.e.mir.gelu
    return op(t.value(node.args[0]))


@rule(aten.clamp.default, aten.hardtanh.default, aten.clamp_min.default, aten.clamp_max.default)
def clamp(t, node):
    """`min(max(x, lo), hi)`; a missing bound is left out."""
    dtype = t.dtype(node)
    x = t.value(node.args[0], dtype)
    bounds = list(node.args[1:3])
    if node.target is aten.clamp_max.default:
        bounds = [None, *bounds]
    if node.target is aten.hardtanh.default:
        bounds = (bounds + [-1.0, 1.0][len(bounds) :])[:2]
    lo, hi = (bounds + [None, None])[:2]
    if lo is not None:
        x = t.e.mir.max(x, t.value(lo, dtype))
    if hi is not None:
        x = t.e.mir.min(x, t.value(hi, dtype))
    return x


@rule(aten.leaky_relu.default)
def leaky_relu(t, node):
    dtype = t.dtype(node)
    x = t.value(node.args[0], dtype)
    slope = node.args[1] if len(node.args) > 1 else 0.01
    zero = t.value(0.0, dtype)
    return t.e.mir.where(t.e.mir.compare(x, zero, "gt"), x, t.e.mir.mul(x, t.value(slope, dtype)))
