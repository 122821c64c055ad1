"""Matrix products: mm, bmm, addmm (linear's decomposition), matmul."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule

aten = torch.ops.aten


@rule(aten.mm.default, aten.bmm.default, aten.matmul.default)
def mm(t, node):
    return t.e.mir.matmul(t.value(node.args[0]), t.value(node.args[1]))


@rule(aten.addmm.default)
def addmm(t, node):
    """`beta * bias + alpha * (a @ b)`."""
    bias, a, b = (t.value(v) for v in node.args[:3])
    beta, alpha = node.kwargs.get("beta", 1), node.kwargs.get("alpha", 1)
    product = t.e.mir.matmul(a, b)
    dtype = t.dtype(node)
    if alpha != 1:
        product = t.e.mir.mul(product, t.value(alpha, dtype))
    if beta != 1:
        bias = t.e.mir.mul(bias, t.value(beta, dtype))
    return t.e.mir.add(product, bias)
