"""VJP rules of gather and scatter_add (each is the other's transpose) and of dynamic_update_slice.

Indices carry no gradient (their role is INDEX); only the gathered table and
the scattered updates do.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.indexing import DynamicUpdateSliceOp, GatherOp, ScatterAddOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, is_static, normalize_axis


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


def block_of(e: Emitter, g: SSAValue, op: DynamicUpdateSliceOp) -> SSAValue:
    """The block of `g` the update was written to: along each dim the update does not fill,
    a gather of `clamp(start, 0, size - length) + iota(length)` (the op's clamped start)."""
    shape, part = tensor_type(op.operand).get_shape(), tensor_type(op.update).get_shape()
    for d, (size, length, start) in enumerate(zip(shape, part, op.start_indices)):
        if size == length:
            continue
        element = tensor_type(start).element_type
        last = e.mir.constant(size - length, element)
        at = e.mir.min(e.mir.max(start, e.mir.constant(0, element)), last)
        g = e.mir.gather(g, e.mir.add(e.mir.iota([length], element, dimension=0), at), axis=d)
    return g


@VJP_RULES.register(DynamicUpdateSliceOp)
def dynamic_update_slice(e: Emitter, op: DynamicUpdateSliceOp, cotangents: Cotangents) -> Gradients:
    """The operand's gradient is the cotangent with the written block zeroed (the same op
    writing zeros); the update's is that block of the cotangent (`block_of`)."""
    (g,) = cotangents
    if not (is_static(tensor_type(op.operand).get_shape()) and is_static(tensor_type(op.update).get_shape())):
        raise Unsupported("the operand and update must have static shapes")
    zeroed = e.mir.dynamic_update_slice(g, zeros_like(e, op.update), *op.start_indices)
    return [zeroed, block_of(e, g, op), *([None] * len(op.start_indices))]
