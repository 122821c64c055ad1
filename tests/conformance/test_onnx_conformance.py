"""ONNX's node tests for SoftmaxCrossEntropyLoss, LogSoftmax and Softmax through MIR:
every case inside RLX's semantics passes as kernels and as lowered primitives, and
docs/conformance.md records exactly these results."""

import pytest

from rlx_xdsl.testing import onnx_conformance as conformance

CASES = sorted(conformance.node_cases(), key=lambda c: c.name)
NODES = {c.name: c.model.graph.node[0] for c in CASES if "_expanded" not in c.name}


@pytest.fixture(scope="module")
def results():
    return conformance.run_all()


@pytest.fixture(scope="module")
def result_of(results):
    return {r.name: r for r in results}


def test_the_issue_counts_of_cases_are_all_collected():
    by_op = {op: [c for c in CASES if conformance._op_type_of(c.name) == op] for op in conformance.OP_TYPES}
    assert {op: len(cases) for op, cases in by_op.items()} == {
        "SoftmaxCrossEntropyLoss": 68, "LogSoftmax": 21, "Softmax": 21,
    }  # fmt: skip
    assert sum("_expanded" in c.name for c in by_op["SoftmaxCrossEntropyLoss"]) == 34


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.name)
def test_case_passes_or_is_outside_rlx_semantics_for_a_stated_reason(case, result_of):
    result = result_of[case.name]
    if result.outside is not None:
        assert result.op_type == "SoftmaxCrossEntropyLoss"
        assert "weight" in case.name  # ONNX names the weighted cases
        assert result.outside == "class weights"
        return
    assert result.kernel is None, result.kernel
    assert result.lowered is None, result.lowered


def test_every_ignore_index_case_runs_and_passes(result_of):
    """ONNX's `_ii` cases without class weights (ignore_index, mean over the rows kept)."""
    ignore_cases = [c.name for c in CASES if "_ii" in c.name and "weight" not in c.name.replace("no_weight", "")]
    assert len(ignore_cases) == 16
    assert all(result_of[name].passed for name in ignore_cases)


def test_a_wrong_mapping_is_caught():
    """The comparison can fail: a softmax over the wrong axis misses ONNX's expected output."""
    case = next(c for c in CASES if c.name == "test_softmax_axis_0")
    node = NODES[case.name]
    wrong = type(node)()
    wrong.CopyFrom(node)
    wrong.attribute[0].i = 2
    result = conformance.run_case(case, wrong)
    assert result.kernel is not None and "max abs error" in result.kernel


def test_docs_conformance_md_records_these_results(results):
    assert conformance.DOC.read_text() == conformance.report(results), (
        "docs/conformance.md is stale: run `python -m rlx_xdsl.testing.onnx_conformance --write`"
    )
