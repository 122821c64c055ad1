"""Shape arithmetic shared by type inference, passes and the interpreter.

Shapes are tuples of ints where `DYNAMIC` (xDSL's `DYNAMIC_INDEX`) marks a `?`
dimension. All broadcasting logic lives here, so the ops, the builder and
later the autodiff `unbroadcast` agree on one rule.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType
from xdsl.ir import Attribute

from rlx_xdsl.support.memo import BoundedMemo, enabled

DYNAMIC = DYNAMIC_INDEX

Shape = tuple[int, ...]


class ShapeError(ValueError):
    """Raised by shape helpers; op verifiers turn it into a VerifyException."""


def is_dynamic(dim: int) -> bool:
    return dim == DYNAMIC


def is_static(shape: Sequence[int]) -> bool:
    return all(d != DYNAMIC for d in shape)


def fmt_dim(dim: int) -> str:
    """`?` for a dynamic dim, else the number, for diagnostics."""
    return "?" if dim == DYNAMIC else str(dim)


def fmt_shape(shape: Sequence[int]) -> str:
    """`[2, ?, 4]`, for diagnostics."""
    return "[" + ", ".join(map(fmt_dim, shape)) + "]"


def dims_match(a: int, b: int) -> bool:
    """Two dims can be equal at run time (equal, or either is `?`)."""
    return a == b or DYNAMIC in (a, b)


def num_elements(shape: Sequence[int]) -> int | None:
    """Product of the dims, or None when any dim is dynamic."""
    if not is_static(shape):
        return None
    n = 1
    for d in shape:
        n *= d
    return n


_TENSOR_TYPES: BoundedMemo[TensorType] = BoundedMemo(1 << 14)
"""Tensor types built by `tensor`, by element type and shape (building one verifies it)."""


def tensor(element_type: Attribute, shape: Sequence[int]) -> TensorType:
    """The tensor type of `shape` over `element_type`; equal requests share one attribute."""
    if not enabled():
        return TensorType(element_type, list(shape))
    key = (element_type, tuple(shape))
    known = _TENSOR_TYPES.get(key)
    return known if known is not None else _TENSOR_TYPES.put(key, TensorType(element_type, list(shape)))


def shape_of(t: Attribute) -> Shape:
    assert isinstance(t, TensorType), t
    return tuple(t.get_shape())


def broadcast_dim(a: int, b: int) -> int:
    """NumPy broadcasting of one dim pair; `?` against n>1 resolves to n."""
    if a == b:
        return a
    if a == 1:
        return b
    if b == 1:
        return a
    if a == DYNAMIC:
        return b
    if b == DYNAMIC:
        return a
    raise ShapeError(f"dimensions {a} and {b} do not broadcast")


def broadcast_shapes(*shapes: Sequence[int]) -> Shape:
    """NumPy-style broadcast of several shapes (right-aligned)."""
    rank = max((len(s) for s in shapes), default=0)
    result = [1] * rank
    for shape in shapes:
        padded = [1] * (rank - len(shape)) + list(shape)
        try:
            result = [broadcast_dim(r, d) for r, d in zip(result, padded)]
        except ShapeError:
            raise ShapeError(
                "shapes " + ", ".join(fmt_shape(s) for s in shapes) + " do not broadcast"
            ) from None
    return tuple(result)


def broadcasts_to(shape: Sequence[int], target: Sequence[int]) -> bool:
    """`shape` broadcasts (NumPy-style, one way) to `target` without changing it.

    Unlike `broadcast_shapes`, the target is fixed: every dim of `shape` must be
    1 or match the aligned target dim (`?` matches anything), and `shape` may not
    have more dims than `target`. Operands such as a norm's gamma or an attention
    bias must fit the shape the op computes, not enlarge it.
    """
    if len(shape) > len(target):
        return False
    tail = target[len(target) - len(shape) :]
    return all(d == 1 or dims_match(d, t) for d, t in zip(shape, tail))


def broadcast_axes(from_shape: Sequence[int], to_shape: Sequence[int]) -> tuple[int, ...]:
    """Axes of `to_shape` that broadcasting `from_shape` expanded.

    Reducing a gradient of shape `to_shape` over these axes (then reshaping)
    undoes the broadcast; this is the `unbroadcast` rule autodiff needs.
    """
    lead = len(to_shape) - len(from_shape)
    if lead < 0:
        raise ShapeError(f"cannot broadcast {fmt_shape(from_shape)} to {fmt_shape(to_shape)}")
    axes = list(range(lead))
    for i, d in enumerate(from_shape):
        if d == 1 and to_shape[lead + i] != 1:
            axes.append(lead + i)
    return tuple(axes)


def unbroadcast_axes(operand_shape: Sequence[int], result_shape: Sequence[int]) -> tuple[Shape, Shape]:
    """How to sum a gradient of `result_shape` back to a broadcast operand's shape.

    Returns `(leading, ones)`: first sum away the `leading` axes the operand
    lacks (dropping them), then sum the axes where the operand has a 1 (`ones`,
    numbered after the drop), keeping them as size 1. A `?` operand dim is taken
    to equal the result's (as RLX does); `rlx-specialize` makes that exact.
    """
    axes = broadcast_axes(operand_shape, result_shape)
    lead = len(result_shape) - len(operand_shape)
    return tuple(a for a in axes if a < lead), tuple(a - lead for a in axes if a >= lead)


def sized_like(sizes: Sequence, like_shape: Sequence | None, like_dims: Sequence[int] | None) -> list:
    """`sizes` with each entry `i` where `like_dims[i] = k >= 0` replaced by
    `like_shape[k]`: the run-time sizes of `mir.iota`, `mir.expand`, `mir.reshape` and `mir.narrow` with a `like`."""
    if like_shape is None or like_dims is None:
        return list(sizes)
    return [like_shape[k] if k >= 0 else d for d, k in zip(sizes, like_dims, strict=True)]


def normalize_axis(axis: int, rank: int) -> int:
    """Map a possibly negative axis into [0, rank); ShapeError when out of range."""
    if not -rank <= axis < rank:
        raise ShapeError(f"axis {axis} is out of range for rank {rank}")
    return axis % rank if rank else 0
