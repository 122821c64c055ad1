"""Every op case, batched over each argument and over all of them, against its definition:
`f_vmap(X)[i] == f(X[i])`, the per-example interpreter runs stacked (an oracle that shares
nothing with the batching rules)."""

import pytest
from xdsl.traits import SymbolTable

from rlx_xdsl.testing.op_cases import all_cases, case_inputs, cases_module
from rlx_xdsl.testing.vmap_check import check_vmap, single_function_module

CASES = all_cases()
MODULE = cases_module(CASES)
SIZE = 2


def configs(count: int) -> list[list[int]]:
    """Each argument alone, and all of them together."""
    return [[i] for i in range(count)] + ([list(range(count))] if count > 1 else [])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_batching_each_argument_matches_the_stacked_examples(case):
    f = SymbolTable.lookup_symbol(MODULE, case.name)
    examples = [case_inputs(case, f, seed=s) for s in range(SIZE)]
    loose = case.approximate or "f16" in case.name
    tolerance = {"rtol": 2e-2, "atol": 1e-2} if loose else {}
    for batched in configs(len(f.body.block.args)):
        check_vmap(single_function_module(f), case.name, examples, batched, **tolerance)


def test_every_mir_op_is_batched_by_some_case():
    """The cases above reach every op with operands (constants and iota are never batched)."""
    from rlx_xdsl.dialects.mir import ALL_OPS

    seen = {op.name for f in MODULE.ops for op in f.walk()}
    assert sorted(op.name for op in ALL_OPS if op.name not in seen) == []


def test_a_while_loop_whose_examples_stop_at_different_steps():
    """x = 0 runs 34 steps, x = 50 runs 17 and x = 200 none: the batched loop masks the
    examples already done (and the shared counter becomes per example)."""
    import numpy as np

    from rlx_xdsl.context import parse_module
    from rlx_xdsl.testing.op_cases import WHILE_CASE

    for bound in ("", " max_iterations = 20"):
        module = parse_module(WHILE_CASE.format(name="w", bound=bound))
        counter = np.array([1, -1], np.int32)
        examples = [[np.array(x, np.float32), counter] for x in (0.0, 50.0, 200.0)]
        check_vmap(module, "w", examples, [0])
