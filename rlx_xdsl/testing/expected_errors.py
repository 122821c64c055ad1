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

As in MLIR, the message is a substring of the diagnostic (a verifier or a parse
error) and a chunk without an annotation must parse and verify cleanly. Only the
message is checked, not the line the annotation points at (xDSL ops carry no
source location; the lit run checks that).

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
from xdsl.context import Context
from xdsl.dialects.llvm import LLVM
from xdsl.ir import SSAValue
from xdsl.utils.exceptions import ParseError, VerifyException

from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module

SPLIT_MARKER = "// -----"
"""The chunk separator of `--split-input-file`."""

_EXPECTED_ERROR = re.compile(r"//\s*expected-error(?:@\S+)?\s*\{\{(.*?)\}\}")
_FUNCTION_NAME = re.compile(r"func\.func\s+@([\w.$-]+)")


def diagnostics_context() -> Context:
    """The dialects negative tests may use: rlx's, plus LLVM for foreign ops such as `llvm.unreachable`."""
    ctx = make_context()
    ctx.load_dialect(LLVM)
    return ctx


@dataclass(frozen=True)
class ExpectedErrorCase:
    """One chunk of a negative lit file and the error it must produce."""

    source: str
    message: str | None
    """The expected diagnostic substring; None when the chunk must verify."""
    file: str
    first_line: int
    """The line of `file` on which `source` starts."""
    location: str
    """`file:line` of the annotation (or of the chunk), for failure messages."""

    def parse_and_verify(self) -> None:
        """Parse and verify the chunk; parse errors name the lines of the whole file."""
        padded = "\n" * (self.first_line - 1) + self.source
        parse_module(padded, self.file, diagnostics_context()).verify()


def expected_error_cases(lit_file: Path) -> list:
    """One `pytest.param(ExpectedErrorCase)` per chunk of `lit_file`, named after its function."""
    params = []
    first_line = 1
    for index, chunk in enumerate(lit_file.read_text().split(SPLIT_MARKER)):
        annotations = list(_EXPECTED_ERROR.finditer(chunk))
        line = first_line + (chunk.count("\n", 0, annotations[0].start()) if annotations else 0)
        location = f"{lit_file.name}:{line}"
        if len(annotations) > 1:
            # Verification stops at the first error, so a second one could never be checked.
            raise ValueError(f"{location}: a chunk may expect at most one error, found {len(annotations)}")
        message = annotations[0][1] if annotations else None
        case = ExpectedErrorCase(chunk, message, lit_file.name, first_line, location)
        name = _FUNCTION_NAME.search(chunk)
        params.append(pytest.param(case, id=name[1] if name else f"chunk{index}"))
        first_line += chunk.count("\n")
    return params


def check_expected_error(case: ExpectedErrorCase) -> None:
    """Parse and verify the chunk; it must fail with the expected message (or pass if none).

    Parsing sits inside the check because some rules (enum spellings, attribute
    verifiers) fire while the chunk is being parsed.
    """
    if case.message is None:
        case.parse_and_verify()
        return
    with pytest.raises((VerifyException, ParseError)) as error:
        case.parse_and_verify()
        pytest.fail(f"{case.location}: expected error {case.message!r}, but the chunk verified")
    if case.message not in str(error.value):
        pytest.fail(f"{case.location}: expected error {case.message!r}, got {str(error.value)!r}")


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
