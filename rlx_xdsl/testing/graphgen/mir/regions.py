"""Recipes of the region MIR ops: `mir.if` and `mir.while` with small bodies.

`GraphBuilder.if_`/`while_` call a body function with a region builder `rb` and
the region's block arguments. Values built with `rb` live inside the region, so
they never join the pool.

Each yielded value is computed from one block argument alone, through ops that
keep its type exactly, and a `mir.if` computes the same slot from the same
capture in both branches. Then the yielded types follow the argument types
even after some dims are made `?` (the shape-specialisation tests do that),
while `mir.if`/`mir.while` require yielded types equal to each other and to
the carried types. Mixing two block arguments could break that equality.

Predicates compare a reduction of the data with a constant, so they hold for
some inputs and not for others, and every loop has a `max_iterations` bound.

`region_emit`, `elementwise_chain`, `small_scalar` and `region_body` serve the
other region ops' recipes too (`graphgen.mir.structured`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from hypothesis import strategies as st
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import (
    AbsOp,
    AddOp,
    CompareOp,
    ConstantOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    ReluOp,
    SigmoidOp,
    SinOp,
    SubOp,
    TanhOp,
)
from rlx_xdsl.dialects.mir.reduction import ReduceOp
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import Emit, GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    anything,
    element_type,
    is_bool,
    is_float,
    is_numeric,
    rank,
    shape_of,
)

FLOAT_UNARY = (NegOp, AbsOp, ReluOp, TanhOp, SinOp, SigmoidOp)
INTEGER_UNARY = (NegOp, AbsOp, ReluOp)
BINARY = (AddOp, SubOp, MulOp, MaxOp, MinOp)


def region_emit(rb: GraphBuilder) -> Emit:
    """`GraphState.emit` for a region body: built with `rb`, kept out of the pool."""
    return lambda op_class, *operands, **properties: rb.emit(op_class(*operands, **properties))


def _one_element(v: SSAValue) -> bool:
    return all(d == 1 for d in shape_of(v))


def small_scalar(s: GraphState, emit: Emit, like: SSAValue) -> SSAValue:
    """A rank-0 constant of `like`'s dtype: it broadcasts without changing any shape."""
    value = s.choice((-1.0, -0.5, 0.0, 0.5, 2.0) if is_float(like) else (-1, 0, 1, 2))
    return emit(ConstantOp, dense(value, element_type(like)))


def _threshold_predicate(s: GraphState, emit: Emit, x: SSAValue) -> SSAValue:
    """`reduce(x) <cmp> c` as a one-element i1 tensor: true for some data, false for other."""
    if rank(x) > 0:
        kind = s.choice(("sum", "max", "mean"))
        x = emit(ReduceOp, x, kind=kind, axes=list(range(rank(x))), keep_dim=s.flag())
    return emit(CompareOp, x, small_scalar(s, emit, x), predicate=s.choice(("gt", "ge", "lt", "le")))


def elementwise_chain(s: GraphState, emit: Emit, x: SSAValue) -> SSAValue:
    """`x` through 0-2 elementwise ops that keep its type (binary ones with `x` or a scalar)."""
    for _ in range(s.integer(0, 2) if is_numeric(x) else 0):
        op = s.choice((FLOAT_UNARY if is_float(x) else INTEGER_UNARY) + BINARY)
        if op in BINARY:
            x = emit(op, x, x if s.flag() else small_scalar(s, emit, x))
        else:
            x = emit(op, x)
    return x


def region_body(s: GraphState, sources: Sequence[int]) -> Callable[..., tuple[SSAValue, ...]]:
    """A region body yielding `chain(args[i])` for each i in `sources` (fresh draws per call)."""

    def build(rb: GraphBuilder, *args: SSAValue) -> tuple[SSAValue, ...]:
        return tuple(elementwise_chain(s, region_emit(rb), args[i]) for i in sources)

    return build


@RECIPES.register(IfOp)
def if_(s: GraphState, op: OpClass) -> None:
    """Captures 1-3 pool values; both branches yield values computed from the same captures."""
    captures = s.need_several(anything, 3)
    pred = s.pick(lambda v: _one_element(v) and (is_bool(v) or is_numeric(v)))
    if pred is None or s.flag():
        pred = _threshold_predicate(s, s.emit, s.need(is_numeric))
    index = st.integers(0, len(captures) - 1)
    body = region_body(s, s.draw(st.lists(index, min_size=1, max_size=len(captures))))
    s.produce(s.builder.if_(pred, captures, body, body))


@RECIPES.register(WhileOp)
def while_(s: GraphState, op: OpClass) -> None:
    """Carries 1-2 numeric values; the condition watches one of them; at most 1-4 iterations."""
    carried = s.need_several(is_numeric, 2)
    watched = s.integer(0, len(carried) - 1)

    def cond(rb: GraphBuilder, *args: SSAValue) -> SSAValue:
        return _threshold_predicate(s, region_emit(rb), args[watched])

    body = region_body(s, range(len(carried)))
    s.produce(s.builder.while_(carried, cond, body, max_iterations=s.integer(1, 4)))
