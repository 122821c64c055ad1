"""Questions recipes ask about pool values: shape, rank, dtype kind, compatibility."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.shapes import ShapeError, broadcast_shapes

Shape = tuple[int, ...]
Accept = Callable[[SSAValue], bool]
"""A predicate choosing which pool values may serve as an operand."""


def anything(v: SSAValue) -> bool:
    return True


def shape_of(v: SSAValue) -> Shape:
    assert isinstance(v.type, TensorType)
    return tuple(v.type.get_shape())


def rank(v: SSAValue) -> int:
    return len(shape_of(v))


def element_type(v: SSAValue) -> Attribute:
    assert isinstance(v.type, TensorType)
    return v.type.element_type


def is_float(v: SSAValue) -> bool:
    return dtypes.is_float(element_type(v))


def is_numeric(v: SSAValue) -> bool:
    """Integer or float (not bool, not complex): arithmetic makes sense."""
    return dtypes.dtype_of(element_type(v)).kind in ("int", "uint", "float")


def is_bool(v: SSAValue) -> bool:
    return dtypes.dtype_of(element_type(v)).kind == "bool"


def floats_of_rank(*ranks: int) -> Accept:
    return lambda v: is_float(v) and rank(v) in ranks


def float_min_rank(n: int) -> Accept:
    return lambda v: is_float(v) and rank(v) >= n


def broadcasts(a: Sequence[int], b: Sequence[int]) -> bool:
    try:
        broadcast_shapes(a, b)
    except ShapeError:
        return False
    return True


def divisors(n: int) -> list[int]:
    return [d for d in range(1, n + 1) if n % d == 0]
