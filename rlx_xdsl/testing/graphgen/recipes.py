"""The recipe table: how to grow a graph by one op, one entry per op class.

A recipe is `recipe(state, op_class)`: it picks operands through `state`
(declining with `Decline` when the pool has nothing suitable) and emits
`op_class` with `state.emit(op_class, ...)`. Receiving the class lets one
recipe serve a family of ops (`@RECIPES.register(AddOp, SubOp, ...)`).

MIR's recipes live in `graphgen.mir`, one module per dialect group; another
dialect adds recipes for its own ops to the same table, and passes its op
classes to `graphs(ops=...)`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from xdsl.ir import Operation
from xdsl.traits import IsTerminator

from rlx_xdsl.dialects.mir import MIR
from rlx_xdsl.registry import OpClass, OpRegistry
from rlx_xdsl.testing.graphgen.state import GraphState

Recipe = Callable[[GraphState, type[Operation]], None]

RECIPES: OpRegistry[Recipe] = OpRegistry("graphgen recipe")


def needs_recipe(op_class: OpClass) -> bool:
    """Terminators (`mir.yield`) end the bodies region recipes build; every other op needs one."""
    return not op_class.has_trait(IsTerminator)


def missing_recipes(op_classes: Iterable[OpClass] | None = None) -> list[str]:
    """Names of the ops (default: MIR's) that need a recipe and have none."""
    ops = MIR.operations if op_classes is None else op_classes
    return RECIPES.missing(c for c in ops if needs_recipe(c))


def available_ops(op_classes: Iterable[OpClass] | None = None) -> list[OpClass]:
    """The ops (default: MIR's) with a recipe, sorted by name: what `graphs()` draws from.

    The name order keeps a graph a function of Hypothesis's draws alone.
    """
    ops = MIR.operations if op_classes is None else op_classes
    return sorted((c for c in ops if c in RECIPES), key=lambda c: c.name)
