"""The shared negative-lit-file checker fails when a chunk's annotation is not met."""

import pytest

from rlx_xdsl.testing.expected_errors import check_expected_error, expected_error_cases

GOOD = """\
func.func @ok(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = mir.relu %a : (tensor<2xf32>) -> tensor<2xf32>
  func.return %0 : tensor<2xf32>
}
// -----
func.func @bad(%a: tensor<2xi32>) -> tensor<2xi32> {
  // expected-error@+1 {{'mir.exp' operand must have a floating-point element type}}
  %0 = mir.exp %a : (tensor<2xi32>) -> tensor<2xi32>
  func.return %0 : tensor<2xi32>
}
"""


def _cases(tmp_path, text):
    path = tmp_path / "invalid.mlir"
    path.write_text(text)
    return [p.values[0] for p in expected_error_cases(path)]


def test_met_annotations_pass(tmp_path):
    ok, bad = _cases(tmp_path, GOOD)
    assert (ok.messages, bad.messages) == ([], ["'mir.exp' operand must have a floating-point element type"])
    assert bad.line_offset == 4  # the chunk starts on line 5, after "// -----"
    check_expected_error(ok)
    check_expected_error(bad)


def test_wrong_message_fails(tmp_path):
    (_, bad) = _cases(tmp_path, GOOD.replace("floating-point", "integer"))
    with pytest.raises(pytest.fail.Exception, match="unexpected error"):
        check_expected_error(bad)


def test_missing_error_fails(tmp_path):
    (_, bad) = _cases(tmp_path, GOOD.replace("mir.exp %a : (tensor<2xi32>)", "mir.neg %a : (tensor<2xi32>)"))
    with pytest.raises(pytest.fail.Exception, match="was not produced"):
        check_expected_error(bad)


def test_unexpected_error_fails(tmp_path):
    (ok, _) = _cases(tmp_path, GOOD.replace("mir.relu %a : (tensor<2xf32>)", "mir.relu %a : (tensor<2xi3>)"))
    with pytest.raises(pytest.fail.Exception, match="unexpected error: .*tensor<2xi3>"):
        check_expected_error(ok)


def test_an_annotation_on_the_wrong_line_fails(tmp_path):
    (_, bad) = _cases(tmp_path, GOOD.replace("expected-error@+1", "expected-error@+2"))
    with pytest.raises(pytest.fail.Exception, match="invalid.mlir:8:.*unexpected error"):
        check_expected_error(bad)


def test_an_expectation_that_verification_never_reaches_fails(tmp_path):
    text = GOOD.replace("  %0 = mir.exp", "  // expected-error {{x}}\n  %0 = mir.exp")
    (_, bad) = _cases(tmp_path, text)
    with pytest.raises(pytest.fail.Exception, match='expected error "x" was not produced'):
        check_expected_error(bad)
