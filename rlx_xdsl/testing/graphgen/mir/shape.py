"""Recipes of the shape MIR ops: reshape, transpose, narrow, concat, expand."""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.shape import (
    ConcatOp,
    ExpandOp,
    NarrowOp,
    ReshapeOp,
    TransposeOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, MAX_RANK, GraphState
from rlx_xdsl.testing.graphgen.values import element_type, rank, shape_of


def _has_dims(v: SSAValue) -> bool:
    return rank(v) >= 1


def _factor_shape(s: GraphState, n: int) -> list[int]:
    """A random shape with `n` elements (prime factors dealt into 0..4 dims)."""
    factors, p, rest = [], 2, n
    while rest > 1:
        while rest % p == 0:
            factors.append(p)
            rest //= p
        p += 1
    dims = [1] * s.integer(0 if n == 1 else 1, MAX_RANK)
    for f in factors:
        dims[s.integer(0, len(dims) - 1)] *= f
    return dims


@RECIPES.register(ReshapeOp)
def reshape(s: GraphState, op: OpClass) -> None:
    x = s.need()
    n = int(np.prod(shape_of(x), dtype=np.int64))
    new_shape = _factor_shape(s, n)
    if new_shape and s.flag():
        new_shape[s.integer(0, len(new_shape) - 1)] = -1
    s.emit(op, x, new_shape=new_shape)


@RECIPES.register(TransposeOp)
def transpose(s: GraphState, op: OpClass) -> None:
    x = s.need(_has_dims)
    s.emit(op, x, perm=list(s.draw(st.permutations(range(rank(x))))))


@RECIPES.register(NarrowOp)
def narrow(s: GraphState, op: OpClass) -> None:
    x = s.need(_has_dims)
    axis = s.axis(rank(x))
    dim = shape_of(x)[axis]
    start = s.integer(0, dim - 1)
    s.emit(op, x, axis=axis, start=start, len=s.integer(1, dim - start))


@RECIPES.register(ConcatOp)
def concat(s: GraphState, op: OpClass) -> None:
    """1-3 pieces that agree off the concat axis: pool values when they fit, else new ones."""
    x = s.need(_has_dims)
    shape, et = shape_of(x), element_type(x)
    axis = s.axis(len(shape))
    pos = axis % len(shape)

    def fits(v: SSAValue) -> bool:
        vs = shape_of(v)
        return element_type(v) == et and len(vs) == len(shape) and all(
            a == b for i, (a, b) in enumerate(zip(vs, shape)) if i != pos
        )

    pieces = [x]
    for _ in range(s.integer(0, 2)):
        found = s.pick(fits) if s.flag() else None
        if found is None:
            piece_shape = shape[:pos] + (s.integer(1, MAX_DIM),) + shape[pos + 1 :]
            found = s.operand(piece_shape, et)
        pieces.append(found)
    s.emit(op, *pieces, axis=axis)


@RECIPES.register(ExpandOp)
def expand(s: GraphState, op: OpClass) -> None:
    """New leading dims, and size-1 dims grown; other dims kept (sometimes spelled -1)."""
    x = s.need()
    shape = shape_of(x)
    lead = [s.integer(1, MAX_DIM) for _ in range(s.integer(0, MAX_RANK - len(shape)))]
    tail = []
    for d in shape:
        if s.flag():
            tail.append(-1)  # keep the input dim
        else:
            tail.append(s.integer(1, MAX_DIM) if d == 1 else d)
    s.emit(op, x, target_shape=lead + tail)
