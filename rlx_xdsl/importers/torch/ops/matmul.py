"""Matrix products: mm, bmm, addmm (linear's decomposition), matmul; grouped_mm (MoE experts)."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.shapes import DYNAMIC

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


@rule(aten._grouped_mm.default, "transformers.grouped_mm_fallback.default")
def grouped_mm(t, node):
    """`torch._grouped_mm(x[S, K], w[E, K, N], offs[E])` -> `[S, N]` (and `transformers`'
    CPU fallback of it, the custom op its MoE experts call): rows `offs[e-1]:offs[e]` of x
    (from 0 for e = 0; `offs` cumulative, int32 or int64) times `w[e]`. Row m's expert is
    the count of offsets `<= m`, the rows from `offs[-1]` on (no expert's) are zeros as the
    fallback's. A `mir.grouped_matmul` with those expert ids; `bias`, `out_dtype`, other
    ranks and a missing `offs` are located errors."""
    args = list(node.args) + [None] * (5 - len(node.args))
    x, w, offs = args[0], args[1], node.kwargs.get("offs", args[2])
    if offs is None or node.kwargs.get("bias", args[3]) is not None or node.kwargs.get("out_dtype", args[4]):
        raise t.fail("only grouped_mm(x, w, offs=...) without bias or out_dtype is supported")
    if t.rank(x) != 2 or t.rank(w) != 3:
        raise t.fail(f"only a 2-D x and a 3-D w are supported, got ranks {t.rank(x)} and {t.rank(w)}")
    experts = t.shape(w)[0]
    if experts == DYNAMIC:
        raise t.fail("a dynamic number of experts is not supported")
    e, value, ends = t.e, t.value(x), t.value(offs, "i64")
    rows = t.shape(x)[0]
    like = {"like": value, "like_dims": [0, -1]} if rows == DYNAMIC else {}
    row = e.mir.iota([rows, 1], "i64", dimension=0, **like)  # [S, 1]
    passed = e.mir.cast(e.mir.compare(row, ends, "ge"), "i64")  # [S, E]: offs[e] <= m
    expert = e.mir.min(e.mir.reduce(passed, kind="sum", axes=[1]), t.value(experts - 1, "i64"))
    product = e.mir.grouped_matmul(value, t.value(w), expert)
    kept = e.mir.compare(row, e.mir.narrow(ends, axis=0, start=experts - 1, len=1), "lt")  # [S, 1]
    return e.mir.where(kept, product, t.value(0.0, t.dtype(node)))
