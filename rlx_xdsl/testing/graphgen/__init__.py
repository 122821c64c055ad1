"""Random valid MIR graphs for property tests (Hypothesis strategies).

    from rlx_xdsl.testing.graphgen import graphs, inputs_for

    @given(graphs(max_ops=12))
    def test_pass_preserves_outputs(module):
        before = run_function(module, None, inputs_for(module))
        ...

A graph is grown one op at a time from a pool of live values (`generate`). Each
op class has a *recipe* in `RECIPES` (`recipes`): a function
`recipe(state, op_class)` that picks compatible operands from `state` (a
`GraphState`: the Hypothesis `draw`, the builder and the pool), creating new
arguments or constants where it can, and emits the op with
`state.emit(op_class, ...)`. When an operand can only come from the pool and
none fits, `state.need(...)` raises `Decline` and the generator tries another
recipe. Operands with an INDEX or LABEL role get in-range ids (`roles`).

MIR's recipes live in `graphgen.mir`, one module per MIR group (`layers`), and HIR's
in `graphgen.hir` (drawn only when `graphs(ops=...)` names HIR ops). Adding an
op means adding a recipe there with `@RECIPES.register(TheOp)`; another
dialect registers recipes for its own ops the same way and passes its op
classes to `graphs(ops=...)`. The tests check that every MIR op but the
terminators has a recipe (`missing_recipes()`).

Shapes stay small (dims 1..4 for new values, rank 0..4) and values tame: new
constants are multiples of 0.25 in [-2, 2], and ops with restricted domains get
guarded operands (`log(abs(x) + 1)`, `x / (abs(y) + 1)`, ...). NaN or inf can
still appear (`exp(exp(x))`); nothing may crash on them.
"""

from rlx_xdsl import layers
from rlx_xdsl.testing.graphgen.generate import graphs, inputs_for
from rlx_xdsl.testing.graphgen.patterns import PATTERNS
from rlx_xdsl.testing.graphgen.recipes import (
    RECIPES,
    Recipe,
    available_ops,
    missing_recipes,
    needs_recipe,
)
from rlx_xdsl.testing.graphgen.roles import with_ids
from rlx_xdsl.testing.graphgen.state import (
    MAX_DIM,
    MAX_RANK,
    Decline,
    GraphState,
    dense,
)

__all__ = [
    "MAX_DIM",
    "MAX_RANK",
    "PATTERNS",
    "RECIPES",
    "Decline",
    "GraphState",
    "Recipe",
    "available_ops",
    "dense",
    "graphs",
    "hir",
    "inputs_for",
    "mir",
    "missing_recipes",
    "needs_recipe",
    "with_ids",
]

# The recipe modules register into RECIPES (they import the modules above, never this one).
layers.load("mir-graphgen")
layers.load("hir-graphgen")
