"""Lowering of MIR shape ops to `tensor` reshapes, slices and concatenation,
`linalg.transpose`, and a broadcasting `linalg.generic` for expand."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.linalg.ops import TransposeOp
from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.tensors import Dim
from rlx_xdsl.dialects.base import i64_array
from rlx_xdsl.dialects.mir import shape as sh
from rlx_xdsl.shapes import normalize_axis


@LOWERINGS.register(sh.ReshapeOp)
def lower_reshape(lw: Lowering, op: sh.ReshapeOp) -> Sequence[SSAValue]:
    """Collapse to one dim and expand to the new shape; a -1 is computed from the element count."""
    new_shape = op.new_shape.get_values()
    known = [d for d in new_shape if d != -1]
    out: list[Dim] = list(new_shape)
    if -1 in new_shape:
        missing = lw.quotient(lw.product(lw.dims(op.input)), lw.product(known))
        out[new_shape.index(-1)] = missing
    return [lw.reshape(op.input, out)]


@LOWERINGS.register(sh.TransposeOp)
def lower_transpose(lw: Lowering, op: sh.TransposeOp) -> Sequence[SSAValue]:
    perm = op.perm.get_values()
    if list(perm) == sorted(perm):
        return [op.input]
    dims = lw.dims(op.input)
    init = lw.empty([dims[p] for p in perm], lw.result_dtype())
    return [lw.emit(TransposeOp(op.input, init, i64_array(perm)))]


@LOWERINGS.register(sh.NarrowOp)
def lower_narrow(lw: Lowering, op: sh.NarrowOp) -> Sequence[SSAValue]:
    rank = op.input.type.get_num_dims()
    axis = normalize_axis(op.axis.value.data, rank)
    offsets: list[Dim] = [0] * rank
    offsets[axis] = op.start.value.data
    sizes = lw.dims(op.input)
    sizes[axis] = op.len.value.data
    return [lw.extract_slice(op.input, offsets, sizes)]


@LOWERINGS.register(sh.ConcatOp)
def lower_concat(lw: Lowering, op: sh.ConcatOp) -> Sequence[SSAValue]:
    axis = normalize_axis(op.axis.value.data, op.result.type.get_num_dims())
    return [lw.concat(list(op.inputs), axis)]


@LOWERINGS.register(sh.ExpandOp)
def lower_expand(lw: Lowering, op: sh.ExpandOp) -> Sequence[SSAValue]:
    target = lw.sized_like(op.target_shape.get_values(), op)
    dims = lw.dims(op.input)
    lead = len(target) - len(dims)
    out: list[Dim] = [dims[i - lead] if isinstance(t, int) and t == -1 else t for i, t in enumerate(target)]
    return [lw.map_elements([op.input], out, lw.result_dtype(), lambda s, x, _: x)]
