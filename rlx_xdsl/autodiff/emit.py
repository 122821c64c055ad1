"""Building blocks the VJP rules share: unbroadcasting, zeros, scalars, reshapes.

Every rule that meets a broadcast operand calls `unbroadcast`, so the reduction
rule (which axes to sum, `shapes.unbroadcast_axes`) lives in one place. The
helpers take and return SSA values and emit through the rule's `Emitter`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType, i1
from xdsl.ir import Attribute, SSAValue

from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.ir.dense import splat_dense
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, is_static, shape_of, unbroadcast_axes


def element_type(value: SSAValue | Attribute) -> Attribute:
    return tensor_type(value).element_type


def cast_to(e: Emitter, value: SSAValue, element: Attribute) -> SSAValue:
    """`value` converted to `element` (itself when it already has that element type)."""
    return value if element_type(value) == element else e.mir.cast(value, element)


def unbroadcast(e: Emitter, grad: SSAValue, like: SSAValue | TensorType) -> SSAValue:
    """The cotangent of a broadcast operand: `grad` summed back to `like`'s shape and dtype.

    `grad` has the shape of the op's result, to which the operand `like` was
    broadcast; summing over the axes broadcasting created (one reduce dropping the
    leading axes, one keeping the size-1 axes) gives the operand's shape without
    a reshape, so `?` dims pass through. The sum is cast back to the operand's
    dtype, which undoes dtype promotion.
    """
    target = tensor_type(like)
    leading, ones = unbroadcast_axes(target.get_shape(), shape_of(grad.type))
    if leading:
        grad = e.mir.reduce(grad, kind="sum", axes=list(leading))
    if ones:
        grad = e.mir.reduce(grad, kind="sum", axes=list(ones), keep_dim=True)
    return cast_to(e, grad, target.element_type)


def scalar(e: Emitter, value: float, like: SSAValue | Attribute) -> SSAValue:
    """A rank-0 constant in `like`'s dtype: it broadcasts against anything."""
    return e.mir.constant(value, element_type(like))


def splat(e: Emitter, value: float | bool, element: Attribute, shape: Sequence[int]) -> SSAValue:
    """A static `dense<value>` of `shape` (one stored element)."""
    result = e.emit(ConstantOp(splat_dense(value, element, shape)))
    assert isinstance(result, SSAValue)
    return result


def zeros_like(e: Emitter, value: SSAValue) -> SSAValue:
    """Zeros of `value`'s type: a splat constant, or for `?` dims `where(false, value, 0)`.

    The select keeps `value`'s run-time shape without reading its elements, so a
    NaN in `value` does not leak into the zeros (as `0 * value` would).
    """
    t = tensor_type(value)
    if is_static(t.get_shape()):
        return splat(e, 0, t.element_type, t.get_shape())
    return e.mir.where(splat(e, False, i1, []), value, scalar(e, 0, value))


def reshape_to(e: Emitter, value: SSAValue, shape: Sequence[int], like: SSAValue | None = None) -> SSAValue:
    """`value` reshaped to `shape`; one `?` is spelled -1; with more, `like` (a tensor of
    `shape`, such as the op's input) gives their sizes at run time."""
    if tuple(shape_of(value.type)) == tuple(shape):
        return value
    new_shape = [-1 if d == DYNAMIC else d for d in shape]
    if sum(d == DYNAMIC for d in shape) <= 1:
        return e.mir.reshape(value, new_shape=new_shape)
    if like is None:
        raise Unsupported(f"reshaping the gradient back to {fmt_shape(shape)} needs at most one ? dim")
    like_dims = [i if d == DYNAMIC else -1 for i, d in enumerate(shape)]
    return e.mir.reshape(value, new_shape=new_shape, like=like, like_dims=like_dims)


def expand_to(e: Emitter, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`value` broadcast to `shape` (a `?` target dim keeps the value's own dim)."""
    if tuple(shape_of(value.type)) == tuple(shape):
        return value
    return e.mir.expand(value, target_shape=[-1 if d == DYNAMIC else d for d in shape])


def keep_dims(shape: Sequence[int], axes: Sequence[int]) -> list[int]:
    """`shape` with the `axes` set to 1: a reduction's result with `keep_dim`."""
    return [1 if i in axes else d for i, d in enumerate(shape)]


def transpose_last_two(e: Emitter, value: SSAValue) -> SSAValue:
    """Swap the last two axes (a batched matrix transpose)."""
    rank = len(shape_of(value.type))
    perm = [*range(rank - 2), rank - 1, rank - 2]
    return e.mir.transpose(value, perm=perm)


def inverse_permutation(perm: Sequence[int]) -> list[int]:
    inverse = [0] * len(perm)
    for i, p in enumerate(perm):
        inverse[p] = i
    return inverse


def static_dims(shape: Sequence[int], what: str) -> tuple[int, ...]:
    """`shape` when every dim is known; else `Unsupported` naming `what` needs it."""
    if not is_static(shape):
        raise Unsupported(f"{what} must be static, got {fmt_shape(shape)}")
    return tuple(shape)


# Forward mode: tangents are None for a symbolic zero ----------------------------------


def add_tangents(e: Emitter, *tangents: SSAValue | None) -> SSAValue | None:
    """The sum of the tangents that are not zero (None when all are)."""
    present = [t for t in tangents if t is not None]
    if not present:
        return None
    total = present[0]
    for t in present[1:]:
        total = e.mir.add(total, t)
    return total


def to_result(e: Emitter, tangent: SSAValue | None, result: SSAValue) -> SSAValue | None:
    """A tangent brought to a result's type: broadcast to its shape, cast to its dtype.

    An operand broadcast and promoted by a binary op contributes a tangent of its
    own shape and dtype; the result's tangent has the result's. A `?` dim of the
    result is reached by adding zeros of the result (expand keeps only its own `?`).
    """
    if tangent is None:
        return None
    target = tensor_type(result)
    tangent = cast_to(e, tangent, target.element_type)
    shape = target.get_shape()
    if tuple(shape_of(tangent.type)) == tuple(shape):
        return tangent
    if is_static(shape):
        return expand_to(e, tangent, shape)
    return e.mir.add(zeros_like(e, result), tangent)


def scale_tangent(e: Emitter, tangent: SSAValue | None, factor: SSAValue) -> SSAValue | None:
    """`tangent * factor`, or None for a zero tangent."""
    return None if tangent is None else e.mir.mul(tangent, factor)
