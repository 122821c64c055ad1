"""Recipes of the elementwise MIR ops; ops with restricted domains get guarded operands."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import element_type as as_element_type
from rlx_xdsl.dialects.mir.elementwise import (
    AbsOp,
    AddOp,
    AtanOp,
    CastOp,
    CompareOp,
    ConstantOp,
    CosOp,
    DivOp,
    ErfOp,
    Expm1Op,
    ExpOp,
    GeluApproxOp,
    GeluOp,
    IotaOp,
    Log1pOp,
    LogOp,
    MaxOp,
    MinOp,
    MulOp,
    NegOp,
    PowOp,
    ReluOp,
    RoundOp,
    RsqrtOp,
    SigmoidOp,
    SiluOp,
    SinOp,
    SqrtOp,
    SubOp,
    TanhOp,
    TanOp,
    WhereOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.shapes import broadcast_shapes
from rlx_xdsl.testing.graphgen.recipes import RECIPES, Recipe
from rlx_xdsl.testing.graphgen.state import GraphState, dense
from rlx_xdsl.testing.graphgen.values import (
    element_type,
    is_bool,
    is_float,
    is_numeric,
    shape_of,
)

CAST_TARGETS = ("f32", "f64", "f16", "bf16", "i32")


def positive(s: GraphState, v: SSAValue) -> SSAValue:
    """`abs(v) + 1` in v's dtype: >= 1, so log/sqrt/div stay finite."""
    one = s.emit(ConstantOp, dense(np.ones(()), element_type(v)))
    return s.emit(AddOp, s.emit(AbsOp, v), one)


@RECIPES.register(ConstantOp)
def constant(s: GraphState, op: OpClass) -> None:
    s.constant(s.shape())


@RECIPES.register(IotaOp)
def iota(s: GraphState, op: OpClass) -> None:
    """A ramp of a new shape along one of its dims, as integers or floats."""
    shape = s.shape(1)
    s.produce(s.builder.mir.iota(shape, s.choice(("i64", "i32", "f32")), dimension=s.axis(len(shape))))


@RECIPES.register(CastOp)
def cast(s: GraphState, op: OpClass) -> None:
    x = s.need()
    current = dtypes.dtype_of(element_type(x)).name
    s.emit(op, x, as_element_type(s.choice([t for t in CAST_TARGETS if t != current])))


@RECIPES.register(CompareOp)
def compare(s: GraphState, op: OpClass) -> None:
    lhs = s.need(is_numeric)
    rhs = s.partner(shape_of(lhs))
    s.emit(op, lhs, rhs, predicate=s.choice(("eq", "ne", "lt", "le", "gt", "ge")))


@RECIPES.register(WhereOp)
def where(s: GraphState, op: OpClass) -> None:
    """The condition is a bool from the pool, or a fresh comparison with a constant."""
    cond = s.pick(is_bool)
    if cond is None:
        x = s.need(is_numeric)
        cond = s.emit(CompareOp, x, s.constant(()), predicate="gt")
    shape = shape_of(cond)
    on_true = s.partner(shape)
    on_false = s.partner(broadcast_shapes(shape, shape_of(on_true)))
    s.emit(op, cond, on_true, on_false)


def unary_recipe(accept: Callable[[SSAValue], bool], guard: bool = False) -> Recipe:
    """One operand from the pool; with `guard`, it is made >= 1 first (`abs(x) + 1`)."""

    def build(s: GraphState, op: OpClass) -> None:
        x = s.need(accept)
        s.emit(op, positive(s, x) if guard else x)

    return build


def binary_recipe(guard_rhs: bool = False) -> Recipe:
    """A numeric lhs from the pool and a broadcast-compatible rhs (>= 1 with `guard_rhs`)."""

    def build(s: GraphState, op: OpClass) -> None:
        lhs = s.need(is_numeric)
        rhs = s.partner(shape_of(lhs))
        s.emit(op, lhs, positive(s, rhs) if guard_rhs else rhs)

    return build


RECIPES.register(AddOp, SubOp, MulOp, MaxOp, MinOp)(binary_recipe())
RECIPES.register(DivOp)(binary_recipe(guard_rhs=True))
RECIPES.register(
    GeluOp, GeluApproxOp, SiluOp, SigmoidOp, TanhOp, ExpOp, SinOp, CosOp, TanOp, AtanOp, RoundOp, Expm1Op, ErfOp
)(unary_recipe(is_float))
RECIPES.register(LogOp, SqrtOp, RsqrtOp, Log1pOp)(unary_recipe(is_float, guard=True))
RECIPES.register(ReluOp, NegOp, AbsOp)(unary_recipe(is_numeric))


@RECIPES.register(PowOp)
def pow_(s: GraphState, op: OpClass) -> None:
    """`pow(abs(a) + 1, tanh(b))`: a positive base and an exponent in (-1, 1)."""
    base = s.need(is_float)
    exponent = s.partner(shape_of(base), accept=is_float)
    s.emit(op, positive(s, base), s.emit(TanhOp, exponent))
