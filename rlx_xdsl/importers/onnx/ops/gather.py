"""Gather along one axis (negative indices wrap, as ONNX allows)."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


@rule("Gather")
def gather(t, node):
    table = t.value(0)
    axis = t.attr("axis", 0) % t.rank(table)
    size = t.shape(table)[axis]
    name = t.input(1)
    if name in t.consts and name not in t.initializers:
        indices = t.consts[name]
        if size != DYNAMIC:
            indices = np.where(indices < 0, indices + size, indices)
        return t.e.mir.gather(table, t.constant(indices, "i64"), axis=axis)
    indices = t.value(1)
    if size != DYNAMIC:  # idx < 0 ? idx + size : idx
        dtype = t.dtype(indices)
        negative = t.e.mir.compare(indices, t.constant(0, dtype), "lt")
        indices = t.e.mir.where(negative, t.e.mir.add(indices, t.constant(size, dtype)), indices)
    return t.e.mir.gather(table, indices, axis=axis)
