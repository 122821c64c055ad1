"""Every primitive MIR op, traced with `jax.jit` through the JAX translation, computes
what the interpreter computes.

The cases are `rlx_xdsl.testing.op_cases`; each is one function jitted on its own
(tiny shapes keep XLA's compile cheap). The translation is the StableHLO export and
the autodiff oracle, so it must agree with the interpreter on every op.
"""

import jax
import numpy as np
import pytest

from rlx_xdsl.conversions.mir_to_jax import jax_function
from rlx_xdsl.interpreters import find_function, run_function
from rlx_xdsl.testing.differential import assert_matches
from rlx_xdsl.testing.op_cases import all_cases, case_inputs, cases_module

CASES = all_cases()


@pytest.fixture(scope="module")
def module():
    return cases_module(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_matches_the_interpreter_under_jit(module, case):
    inputs = case_inputs(case, find_function(module, case.name))
    expected = run_function(module, case.name, inputs)
    got = jax.jit(jax_function(module, case.name))(*inputs)
    assert len(got) == len(expected)
    for index, (g, e) in enumerate(zip(got, expected)):
        assert_matches(np.asarray(g), e, case.approximate, f"@{case.name} output {index}")
