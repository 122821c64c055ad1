"""VJP rules of the data-movement ops: each moves the gradient back where the values came from."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import (
    inverse_permutation,
    reshape_to,
    splat,
    unbroadcast,
    zeros_like,
)
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Cotangents, Gradients, Unsupported, always
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.shape import (
    ConcatOp,
    ExpandOp,
    NarrowOp,
    ReshapeOp,
    TransposeOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, is_static, normalize_axis


@VJP_RULES.register(ReshapeOp)
def reshape(e: Emitter, op: ReshapeOp, cotangents: Cotangents) -> Gradients:
    """The gradient reshaped back to the input's shape (its `?` dims read from the input;
    `like`, read for its shape only, gets none)."""
    (g,) = cotangents
    return [reshape_to(e, g, tensor_type(op.input).get_shape(), op.input), *([None] if op.like is not None else [])]


@VJP_RULES.register(TransposeOp)
def transpose(e: Emitter, op: TransposeOp, cotangents: Cotangents) -> Gradients:
    (g,) = cotangents
    return [e.mir.transpose(g, perm=inverse_permutation(op.perm.get_values()))]


@VJP_RULES.register(ExpandOp)
def expand(e: Emitter, op: ExpandOp, cotangents: Cotangents) -> Gradients:
    """Expanding is broadcasting: sum the gradient back over the expanded axes (`like`,
    read for its shape only, gets none)."""
    (g,) = cotangents
    return [unbroadcast(e, g, op.input), *([None] if op.like is not None else [])]


def _zeros_along(e: Emitter, like: SSAValue, axis: int, size: int) -> SSAValue:
    """Zeros shaped like `like` but `size` long on `axis` (a `?` elsewhere is kept from `like`)."""
    t = tensor_type(like)
    shape = list(t.get_shape())
    shape[axis] = size
    if is_static(shape):
        return splat(e, 0, t.element_type, shape)
    return e.mir.narrow(zeros_like(e, like), axis=axis, start=0, len=size)


@VJP_RULES.register(NarrowOp)
def narrow(e: Emitter, op: NarrowOp, cotangents: Cotangents) -> Gradients:
    """The gradient padded with zeros before and after the slice, along the narrowed axis."""
    (g,) = cotangents
    shape = tensor_type(op.input).get_shape()
    axis = normalize_axis(op.axis.value.data, len(shape))
    start, length = op.start.value.data, op.len.value.data
    if op.like is not None:  # padded past the end, then cut to the input's length
        before = [_zeros_along(e, op.input, axis, start)] if start else []
        padded = e.mir.concat(*before, g, zeros_like(e, op.input), axis=axis)
        if shape[axis] != DYNAMIC:
            return [e.mir.narrow(padded, axis=axis, start=0, len=shape[axis]), None]
        like_dims = [axis if i == axis else -1 for i in range(len(shape))]
        return [e.mir.narrow(padded, axis=axis, start=0, len=-1, like=op.input, like_dims=like_dims), None]
    if shape[axis] == DYNAMIC:
        raise Unsupported(f"the narrowed axis {axis} must be static to pad the gradient back")
    after = shape[axis] - start - length
    pieces = []
    if start:
        pieces.append(_zeros_along(e, op.input, axis, start))
    pieces.append(g)
    if after:
        pieces.append(_zeros_along(e, op.input, axis, after))
    return [pieces[0] if len(pieces) == 1 else e.mir.concat(*pieces, axis=axis)]


@VJP_RULES.register(ConcatOp)
def concat(e: Emitter, op: ConcatOp, cotangents: Cotangents) -> Gradients:
    """Each input gets its own slice of the gradient."""
    (g,) = cotangents
    rank = tensor_type(op.result).get_num_dims()
    axis = normalize_axis(op.axis.value.data, rank)
    sizes = [tensor_type(v).get_shape()[axis] for v in op.inputs]
    if DYNAMIC in sizes:
        raise Unsupported(f"every input's axis {axis} must be static to slice the gradient")
    starts = [sum(sizes[:i]) for i in range(len(sizes))]
    return [
        lambda start=start, size=size: e.mir.narrow(g, axis=axis, start=start, len=size)
        for start, size in zip(starts, sizes)
    ]


COMPLEX_RULES.register(ReshapeOp, TransposeOp, ExpandOp, NarrowOp, ConcatOp)(always)
"""Data movement is linear and moves cotangents without arithmetic: right for complex values."""
