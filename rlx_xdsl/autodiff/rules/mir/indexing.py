"""VJP rules of gather and scatter_add: each is the other's transpose.

Indices carry no gradient (their role is INDEX); only the gathered table and
the scattered updates do.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.indexing import GatherOp, ScatterAddOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, normalize_axis


@VJP_RULES.register(GatherOp)
def gather(e: Emitter, op: GatherOp, cotangents: Cotangents) -> Gradients:
    """`mir.gather_backward`: the gradient's slices summed back into the table rows they came from.

    One kernel for any axis and index rank (RLX uses `scatter_add` for axis 0,
    which takes only a vector of indices).
    """
    (g,) = cotangents
    table = tensor_type(op.table).get_shape()
    axis = normalize_axis(op.axis.value.data, len(table))
    if table[axis] == DYNAMIC:
        raise Unsupported(f"the table's axis {axis} must be static to size the gradient")
    return [e.mir.gather_backward(g, op.indices, axis=axis, dim_size=table[axis]), None]


@VJP_RULES.register(ScatterAddOp)
def scatter_add(e: Emitter, op: ScatterAddOp, cotangents: Cotangents) -> Gradients:
    """Each update row receives the gradient of the row it was added to."""
    (g,) = cotangents
    return [e.mir.gather(g, op.indices, axis=0), None]
