"""Gather along one axis. A negative index counts from the end, as ONNX says: constant
indices are normalised at import; `mir.gather` counts a run-time one from the end itself."""

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
    return t.e.mir.gather(table, t.value(1), axis=axis)
