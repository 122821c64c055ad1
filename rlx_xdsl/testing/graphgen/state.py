"""What a recipe works with while a graph grows: draws, the builder and the value pool.

Recipes only *draw* through `GraphState` (never from their own randomness), so
a graph is a pure function of Hypothesis's choices: reproducible and shrinkable.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import Attribute, Operation, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.building.builder import element_type as as_element_type
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.ir.dense import numpy_to_dense
from rlx_xdsl.ir.emitter import Emitted
from rlx_xdsl.testing.graphgen.values import (
    Accept,
    Shape,
    anything,
    broadcasts,
    element_type,
    is_numeric,
    shape_of,
)

MAX_RANK = 4
MAX_DIM = 4
"""Largest dim of a newly created value."""
POOL_MAX_DIM = 8
"""Values with a larger dim (from concat, reshape...) are not reused as operands."""

Emit = Callable[..., Emitted]
"""`emit(op_class, *operands, **properties)`: builds the op with its own constructor."""


def dense(data: Any, dtype: Attribute | str):
    """The `ConstantOp` payload holding `data` in `dtype`: `emit(ConstantOp, dense(...))`."""
    return numpy_to_dense(np.asarray(data), as_element_type(dtype))


class Decline(Exception):
    """A recipe found no compatible operand; the generator picks another op."""


class GraphState:
    """Hypothesis draws, the builder of `@main` and the pool of reusable values."""

    def __init__(self, draw, builder: GraphBuilder, max_inputs: int):
        self.draw = draw
        self.builder = builder
        self.max_inputs = max_inputs
        self.pool: list[SSAValue] = []
        """Values recipes may use as operands."""
        self.produced: list[SSAValue] = []
        """Every op result, in program order: the candidates for outputs."""
        self.n_args = 0

    # Drawing ----------------------------------------------------------------

    def integer(self, lo: int, hi: int) -> int:
        return self.draw(st.integers(lo, hi))

    def choice(self, options: Sequence):
        return self.draw(st.sampled_from(list(options)))

    def flag(self) -> bool:
        return self.draw(st.booleans())

    def shape(self, min_rank: int = 0, max_rank: int = MAX_RANK) -> Shape:
        n = self.integer(min_rank, max_rank)
        return tuple(self.integer(1, MAX_DIM) for _ in range(n))

    def axis(self, r: int) -> int:
        """An axis of a rank-`r` value, sometimes spelled negatively."""
        return self.integer(-r, r - 1)

    def rng(self) -> np.random.Generator:
        """A numpy generator seeded by Hypothesis (array data stays shrinkable)."""
        return np.random.default_rng(self.integer(0, 2**32 - 1))

    # The pool ---------------------------------------------------------------

    def candidates(self, accept: Accept = anything) -> list[SSAValue]:
        return [v for v in self.pool if accept(v)]

    def pick(self, accept: Accept = anything) -> SSAValue | None:
        """A pool value satisfying `accept`, or None when there is none."""
        found = self.candidates(accept)
        return self.choice(found) if found else None

    def need(self, accept: Accept = anything) -> SSAValue:
        """A pool value satisfying `accept`; `Decline` when there is none."""
        value = self.pick(accept)
        if value is None:
            raise Decline
        return value

    def need_several(self, accept: Accept, most: int) -> list[SSAValue]:
        """1 to `most` distinct pool values satisfying `accept`; `Decline` when there is none."""
        found = self.candidates(accept)
        if not found:
            raise Decline
        size = st.integers(0, len(found) - 1)
        chosen = self.draw(st.lists(size, min_size=1, max_size=min(most, len(found)), unique=True))
        return [found[i] for i in chosen]

    def _offer(self, value: SSAValue) -> None:
        """Pool `value` unless it is too big to be a good operand."""
        shape = shape_of(value)
        if len(shape) <= MAX_RANK and all(d <= POOL_MAX_DIM for d in shape):
            self.pool.append(value)

    # Creating operands ------------------------------------------------------

    def new_arg(
        self, shape: Shape, dtype: Attribute | str = "f32", param: bool = False
    ) -> SSAValue | None:
        """A new function input (or parameter), or None once the budget is spent."""
        if self.n_args >= self.max_inputs:
            return None
        self.n_args += 1
        make = self.builder.param if param else self.builder.input
        value = make(f"{'w' if param else 'x'}{self.n_args - 1}", shape, dtype)
        self._offer(value)
        return value

    def constant(self, shape: Shape, dtype: Attribute | str = "f32") -> SSAValue:
        """A tame constant: multiples of 0.25 in [-2, 2] (integers: -2..2, unsigned 0..2; i1: 0/1)."""
        et = as_element_type(dtype)
        kind = dtypes.dtype_of(et).kind
        rng = self.rng()
        if kind == "bool":
            data = rng.integers(0, 2, size=shape).astype(bool)
        elif kind == "float":
            data = rng.integers(-8, 9, size=shape) / 4.0
        else:
            data = rng.integers(0 if kind == "uint" else -2, 3, size=shape)
        return self.emit(ConstantOp, dense(data, et))

    def operand(self, shape: Shape, dtype: Attribute | str = "f32", param: bool = False) -> SSAValue:
        """A value of exactly this shape and dtype: from the pool, a new argument or a constant."""
        et = as_element_type(dtype)
        found = self.candidates(lambda v: shape_of(v) == tuple(shape) and element_type(v) == et)
        if found and self.flag():
            return self.choice(found)
        if self.flag():
            arg = self.new_arg(shape, et, param)
            if arg is not None:
                return arg
        return self.constant(shape, et)

    def partner_shape(self, shape: Shape) -> Shape:
        """A random shape that broadcasts with `shape` (fewer, equal or more dims)."""
        new_rank = self.integer(0, max(MAX_RANK, len(shape)))
        aligned = min(new_rank, len(shape))
        lead = tuple(self.integer(1, MAX_DIM) for _ in range(new_rank - aligned))
        return lead + tuple(self.choice((d, 1)) for d in shape[len(shape) - aligned :])

    def partner(self, shape: Shape, accept: Accept = is_numeric) -> SSAValue:
        """A value whose shape broadcasts with `shape`: from the pool or new."""
        found = self.candidates(lambda v: accept(v) and broadcasts(shape_of(v), shape))
        if found and self.flag():
            return self.choice(found)
        return self.operand(self.partner_shape(shape))

    # Emitting ---------------------------------------------------------------

    def emit(self, op_class: type[Operation], *operands: Any, **properties: Any) -> Emitted:
        """Build `op_class(*operands, **properties)` in `@main`; its results join the pool."""
        return self.produce(self.builder.emit(op_class(*operands, **properties)))

    def produce(self, result: Emitted) -> Emitted:
        """Record results of an op emitted in `@main` (by `emit` or a builder helper)."""
        for value in result if isinstance(result, tuple) else (result,):
            self.produced.append(value)
            self._offer(value)
        return result
