"""The generator loop: `graphs()` grows a function one recipe step at a time."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES, available_ops
from rlx_xdsl.testing.graphgen.state import Decline, GraphState


def _resolve_ops(ops: Sequence[OpClass] | None) -> list[OpClass]:
    """The ops to draw from, sorted by name (so a graph depends on the draws alone)."""
    if ops is None:
        return available_ops()
    not_classes = [op for op in ops if not isinstance(op, type)]
    if not_classes:
        raise TypeError(f"graphs(ops=...) takes op classes, got {', '.join(map(repr, not_classes))}")
    unknown = RECIPES.missing(set(ops))
    if unknown:
        raise ValueError(f"no graphgen recipe for: {', '.join(unknown)}")
    return sorted(set(ops), key=lambda op: op.name)


def graphs(
    max_ops: int = 10,
    ops: Sequence[OpClass] | None = None,
    *,
    max_inputs: int = 4,
    max_outputs: int = 3,
    patterns: Sequence[Callable[[GraphState], None]] = (),
) -> st.SearchStrategy[ModuleOp]:
    """Modules holding one valid function `@main` built from up to `max_ops` recipe steps.

    `ops` restricts the recipes to these op classes (default: every MIR op;
    `[]` with `patterns` for patterns only). `patterns` adds pattern recipes
    (`graphgen.patterns.PATTERNS`: the chains fusion passes match) to draw
    from, one step each. A step may emit helper ops too (constants,
    `abs`/`add` guards), so the op count can exceed `max_ops`. Some values
    stay unused, which gives dead code to passes.
    """
    chosen_ops: list = [*_resolve_ops(ops), *patterns]
    if not chosen_ops:
        raise ValueError("no ops to generate graphs from")

    @st.composite
    def build(draw) -> ModuleOp:
        state = GraphState(draw, GraphBuilder("main"), max_inputs)
        for _ in range(state.integer(1, min(2, max_inputs))):
            state.new_arg(state.shape())
        steps = state.integer(1, max_ops)
        done = 0
        for _ in range(4 * steps):  # bounded: recipes may keep declining
            if done == steps:
                break
            op = state.choice(chosen_ops)
            try:
                if isinstance(op, type):
                    RECIPES[op](state, op)
                else:
                    op(state)
                done += 1
            except Decline:
                pass
        candidates = state.produced or state.pool
        chosen = draw(
            st.lists(
                st.integers(0, len(candidates) - 1),
                min_size=1,
                max_size=min(max_outputs, len(candidates)),
                unique=True,
            )
        )
        state.builder.output(*(candidates[i] for i in chosen))
        return state.builder.module()

    return build()


def inputs_for(module: ModuleOp, seed: int = 0, function: str | None = None) -> list[np.ndarray]:
    """Deterministic random arguments for a generated (or any static) function."""
    return random_inputs(find_function(module, function), seed)
