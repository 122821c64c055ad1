"""Expected verifier errors in pytest: a negative lit file's annotations, and builder calls.

A negative lit test (`lit_tests/dialects/mir/invalid-<group>.mlir`) holds one
`// -----` chunk per verifier rule, annotated MLIR-style:

    func.func @bad(%a: tensor<3x5xf32>, %b: tensor<4x2xf32>) -> tensor<3x2xf32> {
      // expected-error@+1 {{'mir.matmul' contraction dims 5 and 4 differ}}
      %0 = mir.matmul %a, %b : (tensor<3x5xf32>, tensor<4x2xf32>) -> tensor<3x2xf32>
      ...

lit checks these through `rlx-opt --verify-diagnostics`. The op test modules
check them again in-process, so that a reworded verifier message fails the
op's own pytest file too, independently of the driver. A test module adds one
test case per chunk with

    test_invalid_lit_chunks = expected_error_test(LIT_DIR / "invalid-conv.mlir")

which is short for

    @pytest.mark.parametrize("case", expected_error_cases(LIT_DIR / "invalid-conv.mlir"))
    def test_invalid_lit_chunks(case):
        check_expected_error(case)

The chunks are parsed with source locations and matched by the same code as
`rlx-opt --verify-diagnostics` (`tools.expectations`): the message must contain
the annotated text and sit on the annotated line, and a chunk without an
annotation must parse and verify cleanly.

`build_op` emits one op on fresh inputs of given shapes, for tests of result
type inference and of the errors the builder raises:

    with pytest.raises(VerifyException, match="'mir.topk' k = 4 exceeds the last dim 3"):
        build_op("topk", [[2, 3]], k=4)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.ir.diagnostics import Diagnostic
from rlx_xdsl.ir.locations import LineIndex
from rlx_xdsl.ir.source import SourceError, parse_source, split_chunks
from rlx_xdsl.tools.expectations import check_diagnostics, parse_expectations

_FUNCTION_NAME = re.compile(r"func\.func\s+@([\w.$-]+)")


@dataclass(frozen=True)
class ExpectedErrorCase:
    """One chunk of a negative lit file and the annotations it holds."""

    source: str
    file: str
    line_offset: int
    """The number of lines of `file` before `source`."""

    @property
    def lines(self) -> LineIndex:
        return LineIndex(self.source, self.file, self.line_offset)

    @property
    def messages(self) -> list[str]:
        """The texts of the chunk's `expected-*` annotations (none: the chunk must verify)."""
        return [e.text for e in parse_expectations(self.lines)]

    def diagnostics(self) -> list[Diagnostic]:
        """What parsing and verifying the chunk reports (empty when it verifies)."""
        try:
            parse_source(make_context(), self.source, self.file, line_offset=self.line_offset)
        except SourceError as e:
            return [e.diagnostic]
        return []


def expected_error_cases(lit_file: Path) -> list:
    """One `pytest.param(ExpectedErrorCase)` per chunk of `lit_file`, named after its function."""
    params = []
    for index, (chunk, offset) in enumerate(split_chunks(lit_file.read_text())):
        case = ExpectedErrorCase(chunk, lit_file.name, offset)
        name = _FUNCTION_NAME.search(chunk)
        params.append(pytest.param(case, id=name[1] if name else f"chunk{index}"))
    return params


def check_expected_error(case: ExpectedErrorCase) -> None:
    """Parse and verify the chunk; its diagnostics must meet its annotations exactly.

    The matching is `rlx-opt --verify-diagnostics`'s own (`tools.expectations`):
    same severity, same line, message containing the annotated text.
    """
    problems = check_diagnostics(case.diagnostics(), parse_expectations(case.lines))
    if problems:
        pytest.fail("\n".join(f"{p.pos}: {p.message}" for p in problems))


def expected_error_test(lit_file: Path):
    """A pytest test, parametrized by `expected_error_cases(lit_file)`, that checks each chunk.

    Bind it to a `test_...` name at module level; pytest collects it under that name.
    """

    @pytest.mark.parametrize("case", expected_error_cases(lit_file))
    def test(case: ExpectedErrorCase) -> None:
        check_expected_error(case)

    test.__doc__ = f"Each chunk of {lit_file.name} fails with its `expected-error` message."
    return test


def build_op(
    op: str, shapes: Sequence[Sequence[int]], dtypes: str | Sequence[str] = "f32", **attributes
) -> SSAValue | tuple[SSAValue, ...]:
    """`b.<op>(...)` on fresh inputs of `shapes` (one dtype for all, or one each); its result(s).

    Ops infer their result types while they are built, so an invalid combination
    raises the op's `VerifyException` right here.
    """
    b = GraphBuilder("f")
    if isinstance(dtypes, str):
        dtypes = [dtypes] * len(shapes)
    typed = zip(shapes, dtypes, strict=True)
    args = [b.input(f"x{i}", shape, dtype) for i, (shape, dtype) in enumerate(typed)]
    return getattr(b, op)(*args, **attributes)
