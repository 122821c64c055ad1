"""softmax and log_softmax along one dim."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule

aten = torch.ops.aten


@rule(aten._softmax.default)
def softmax(t, node):
    return t.e.mir.softmax(t.value(node.args[0], t.dtype(node)), axis=node.args[1])


@rule(aten._log_softmax.default)
def log_softmax(t, node):
    """`s - log(sum(exp(s)))` with `s = x - max(x)`, the stable form."""
    axis = node.args[1]
    x = t.value(node.args[0], t.dtype(node))
    shifted = t.e.mir.sub(x, t.e.mir.reduce(x, kind="max", axes=[axis], keep_dim=True))
    total = t.e.mir.reduce(t.e.mir.exp(shifted), kind="sum", axes=[axis], keep_dim=True)
    return t.e.mir.sub(shifted, t.e.mir.log(total))
