"""Emission helpers the decomposition rules share: typed scalars, masks, sums and reshapes.

Every helper emits primitive MIR through the rule's `Emitter`, so the new ops
sit before the kernel they replace and carry its location.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import i1
from xdsl.ir import Attribute, Operation, SSAValue

from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape


def dtype_of(value: SSAValue) -> Attribute:
    return tensor_type(value).element_type


def shape_of(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_type(value).get_shape())


def scalar(e: Emitter, number: float, like: SSAValue | Attribute) -> SSAValue:
    """A rank-0 constant in `like`'s element type (or in the element type `like`)."""
    return e.mir.constant(number, like if not isinstance(like, SSAValue) else dtype_of(like))


def flag(e: Emitter, value: bool) -> SSAValue:
    """A rank-0 i1 constant."""
    return e.mir.constant(value, i1)


def filled(e: Emitter, number: float, like: SSAValue) -> SSAValue:
    """`number` in every element of a tensor of `like`'s type, without reading `like`'s values.

    `where(true, number, like)` keeps `like`'s shape (`?` dims included) and never
    multiplies (`like * 0` would turn inf into NaN).
    """
    return e.mir.where(flag(e, True), scalar(e, number, like), like)


def zeros_like(e: Emitter, like: SSAValue) -> SSAValue:
    return filled(e, 0.0, like)


def logical_and(e: Emitter, a: SSAValue, b: SSAValue) -> SSAValue:
    """`a and b` for i1 tensors (broadcast): `where(a, b, false)`."""
    return e.mir.where(a, b, flag(e, False))


def keep_where(e: Emitter, cond: SSAValue, value: SSAValue) -> SSAValue:
    """`value` where `cond`, else 0."""
    return e.mir.where(cond, value, scalar(e, 0.0, value))


def total(e: Emitter, value: SSAValue, axes: Sequence[int], keep_dim: bool = False) -> SSAValue:
    """The sum over `axes` (`value` itself when there are none)."""
    return e.mir.reduce(value, kind="sum", axes=list(axes), keep_dim=keep_dim) if axes else value


def mean(e: Emitter, value: SSAValue, axes: Sequence[int]) -> SSAValue:
    """The mean over `axes`, keeping them as size-1 dims."""
    return e.mir.reduce(value, kind="mean", axes=list(axes), keep_dim=True)


def reshape_to(e: Emitter, op: Operation, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    """`value` reshaped to `shape`, whose one `?` (if any) becomes -1.

    A reshape can leave only one dim to inference; a kernel whose rewrite needs
    two unknown dims at once is reported at the kernel.
    """
    dynamic = sum(d == DYNAMIC for d in shape)
    if dynamic > 1:
        raise OpError(
            op,
            f"'{op.name}' cannot be decomposed: it needs a reshape to {fmt_shape(shape)}, "
            "which has more than one dynamic dim",
        )
    if tuple(shape) == shape_of(value):
        return value
    return e.mir.reshape(value, new_shape=[-1 if d == DYNAMIC else d for d in shape])


def require_static(op: Operation, what: str, dims: Sequence[int]) -> None:
    """Report at `op` that its rewrite needs the dims `what` to be static."""
    if DYNAMIC in dims:
        raise OpError(op, f"'{op.name}' cannot be decomposed: {what} {fmt_shape(dims)} must be static")


def transposed(e: Emitter, value: SSAValue, perm: Sequence[int]) -> SSAValue:
    """`value` with its axes permuted (itself for the identity permutation)."""
    if list(perm) == list(range(len(perm))):
        return value
    return e.mir.transpose(value, perm=list(perm))


def swap_last(e: Emitter, value: SSAValue) -> SSAValue:
    """The transpose of the last two axes (of a matrix batch)."""
    rank = len(shape_of(value))
    return e.mir.transpose(value, perm=[*range(rank - 2), rank - 1, rank - 2])
