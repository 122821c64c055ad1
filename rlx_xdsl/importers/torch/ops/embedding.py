"""Gathers: embedding, index_select, and indexing one dim with a tensor."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule

aten = torch.ops.aten


@rule(aten.embedding.default)
def embedding(t, node):
    weight, indices = node.args[:2]
    return t.e.mir.gather(t.value(weight), t.value(indices), axis=0)


@rule(aten.index_select.default)
def index_select(t, node):
    x, dim, index = node.args
    return t.e.mir.gather(t.value(x), t.value(index), axis=dim % t.rank(x))


@rule(aten.index.Tensor)
def index(t, node):
    """`x[idx]` and `x[:, idx]`: one index tensor, the other dims whole."""
    x, indices = node.args
    given = [(axis, i) for axis, i in enumerate(indices) if i is not None]
    if len(given) != 1:
        raise t.fail("indexing with several index tensors is not supported")
    axis, i = given[0]
    if t.dtype(i) == "i1":
        raise t.fail("indexing with a boolean mask (a data-dependent shape) is not supported")
    return t.e.mir.gather(t.value(x), t.value(i), axis=axis)
