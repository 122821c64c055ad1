"""Every primitive MIR op, lowered on its own, computes on IREE what the interpreter computes.

The cases (`rlx_xdsl.testing.op_cases`) are compiled once per session (the `iree_op_cases`
fixture of tests/conftest.py, shared with the differential test); each case is one test.
"""

import numpy as np
import pytest

from rlx_xdsl import layers
from rlx_xdsl.conversions.mir_to_linalg.lowering import UNLOWERABLE
from rlx_xdsl.dialects.mir import ALL_OPS
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.differential import assert_matches, mismatch
from rlx_xdsl.testing.op_cases import case_inputs, cases_module, lowerable_cases

CASES = lowerable_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_matches_the_interpreter_on_iree(iree_op_cases, case):
    module, binary = iree_op_cases[case.name]
    inputs = case_inputs(case, find_function(module, case.name))
    expected = run_function(module, case.name, inputs)
    got = binary.run(case.name, inputs)
    assert len(got) == len(expected)
    for index, (g, e) in enumerate(zip(got, expected)):
        assert_matches(g, e, case.approximate, f"@{case.name} output {index}")


def test_the_cases_cover_every_primitive_op():
    """Except the ops with no upstream form (`UNLOWERABLE`: a located error, tested in lit)."""
    layers.load("linalg")
    used = {type(op) for op in cases_module(CASES).walk()}
    assert sorted(op.name for op in ALL_OPS if op not in used and op not in UNLOWERABLE) == []


def test_the_comparison_catches_wrong_values_and_dtypes():
    expected = np.array([1.0, 2.0, 1000.0], np.float32)
    assert mismatch(expected * np.float32(1 + 1e-6), expected, approximate=False) is None
    assert "1 of 3 elements differ" in mismatch(expected + np.float32([0, 0.5, 0]), expected, False)
    assert "dtype" in mismatch(expected.astype(np.float64), expected, False)
    assert mismatch(np.array([1, 2]), np.array([1, 3]), True) == "1 of 2 elements differ"
    z = np.array([1 + 1j, 2 - 1j], np.complex64)
    assert mismatch(z * np.complex64(1 + 1e-6j), z, approximate=False) is None
    assert "1 of 2 elements differ" in mismatch(z + np.complex64([0, 0.5j]), z, False)
    nan = np.array([np.nan, 1.0], np.float32)
    assert mismatch(nan, nan, False) is None
    assert mismatch(np.array([1.0, 1.0], np.float32), nan, True) is not None
