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
    """Collapse to one dim and expand to the new shape; the dims `like` sizes are its
    `tensor.dim`s, and a remaining -1 is computed from the element count."""
    out: list[Dim] = lw.sized_like(op.new_shape.get_values(), op)
    if -1 in out:
        known = [d for d in out if d != -1]
        out[out.index(-1)] = lw.quotient(lw.product(lw.dims(op.input)), lw.product(known))
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
    sizes[axis] = lw.sized_like([op.len.value.data] * rank, op)[axis]
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
