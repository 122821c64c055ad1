"""VJP rules of gather and scatter_add: each is the other's transpose.

Indices carry no gradient (their role is INDEX); only the gathered table and
the scattered updates do.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import reshape_to
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.indexing import GatherOp, ScatterAddOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, normalize_axis, num_elements


@VJP_RULES.register(GatherOp)
def gather(e: Emitter, op: GatherOp, cotangents: Cotangents) -> Gradients:
    """Scatter-add the gradient's rows back to the table rows they were read from.

    `g` is `table[:axis] + indices.shape + table[axis+1:]`: the index dims move to
    the front and flatten into one row dim, `scatter_add` sums rows picked more
    than once, and the table's axis moves back into place.
    """
    (g,) = cotangents
    table = tensor_type(op.table).get_shape()
    index_shape = tensor_type(op.indices).get_shape()
    axis = normalize_axis(op.axis.value.data, len(table))
    if table[axis] == DYNAMIC:
        raise Unsupported(f"the table's axis {axis} must be static to size the gradient")
    n_index = len(index_shape)
    rank = len(table) - 1 + n_index
    front = [*range(axis, axis + n_index), *range(axis), *range(axis + n_index, rank)]
    if front != list(range(rank)):
        g = e.mir.transpose(g, perm=front)
    rows = num_elements(index_shape)
    rest = [*table[:axis], *table[axis + 1 :]]
    g = reshape_to(e, g, [DYNAMIC if rows is None else rows, *rest])
    indices = reshape_to(e, op.indices, [DYNAMIC if rows is None else rows])
    summed = e.mir.scatter_add(g, indices, dim_size=table[axis])
    back = [*range(1, axis + 1), 0, *range(axis + 1, len(table))]
    if back != list(range(len(table))):
        summed = e.mir.transpose(summed, perm=back)
    return [summed, None]


@VJP_RULES.register(ScatterAddOp)
def scatter_add(e: Emitter, op: ScatterAddOp, cotangents: Cotangents) -> Gradients:
    """Each update row receives the gradient of the row it was added to."""
    (g,) = cotangents
    return [e.mir.gather(g, op.indices, axis=0), None]
