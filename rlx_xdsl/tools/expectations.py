"""`--verify-diagnostics` with MLIR's meaning: match emitted diagnostics against
`expected-*` annotations written in the input.

    %0 = mir.matmul %a, %b ...  // expected-error {{contraction dims 5 and 4 differ}}
    // expected-error@+1 {{contraction dims 5 and 4 differ}}
    // expected-error@-1 {{...}}     the line above
    // expected-error@above {{...}}  the nearest line above without an annotation
    // expected-error@below {{...}}  the nearest line below without an annotation
    // expected-error@unknown {{...}} a diagnostic without a source location
    // expected-error-re {{dims {{[0-9]+}} and}}  `{{...}}` parts are regexes

`warning`, `remark` and `note` work like `error`. Each expectation must be met by
one diagnostic of that severity on that line whose message contains the text; every
diagnostic must meet an expectation. Context notes (the op, the pass) are not
diagnostics of their own here, as in mlir-opt, which turns them off under
`--verify-diagnostics`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rlx_xdsl.ir.diagnostics import Diagnostic
from rlx_xdsl.ir.locations import LineIndex, SourcePos

_DESIGNATOR = re.compile(
    r"expected-(?P<severity>error|warning|remark|note)(?P<re>-re)?[ \t]*"
    r"(?:@(?P<where>[+-][0-9]+|above|below|unknown))?[ \t]*\{\{(?P<text>.*)\}\}[ \t]*$"
)


@dataclass
class Expectation:
    """One `expected-*` annotation: where it was written and which line it targets."""

    severity: str
    text: str
    is_regex: bool
    written_at: SourcePos
    line: int | None  # None: a diagnostic without location (`@unknown`)
    met: bool = False

    def accepts(self, diag: Diagnostic) -> bool:
        if self.met or diag.severity != self.severity:
            return False
        if self.line is None:
            if diag.pos is not None:
                return False
        elif diag.pos is None or diag.pos.line != self.line or diag.pos.file != self.written_at.file:
            return False
        if self.is_regex:
            return re.search(_mixed_regex(self.text), diag.message) is not None
        return self.text in diag.message


def _mixed_regex(text: str) -> str:
    """MLIR's `-re` form: literal text with `{{regex}}` islands."""
    parts = re.split(r"\{\{(.*?)\}\}", text)
    return "".join(part if i % 2 else re.escape(part) for i, part in enumerate(parts))


def parse_expectations(source: LineIndex) -> list[Expectation]:
    """All `expected-*` annotations of one input chunk, with their target lines."""
    expectations: list[Expectation] = []
    waiting_below: list[Expectation] = []
    last_plain_line: int | None = None
    first = source.line_offset + 1
    for line_no, line in enumerate(source.text.split("\n"), start=first):
        match = _DESIGNATOR.search(line)
        if match is None:
            last_plain_line = line_no
            for expectation in waiting_below:
                expectation.line = line_no
            waiting_below.clear()
            continue
        where = match.group("where")
        expectation = Expectation(
            severity=match.group("severity"),
            text=match.group("text"),
            is_regex=match.group("re") is not None,
            written_at=SourcePos(source.name, line_no, match.start() + 1),
            line=_target_line(where, line_no, last_plain_line),
        )
        if where == "below":
            waiting_below.append(expectation)
        expectations.append(expectation)
    return expectations


def _target_line(where: str | None, line_no: int, last_plain_line: int | None) -> int | None:
    if where is None:
        return line_no
    if where == "unknown":
        return None
    if where == "above":
        return last_plain_line if last_plain_line is not None else 0
    if where == "below":
        return 0  # filled in when the next plain line is seen
    return line_no + int(where)


def check_diagnostics(diagnostics: list[Diagnostic], expectations: list[Expectation]) -> list[Diagnostic]:
    """Match diagnostics to expectations; return the errors to report (empty = all good).

    Errors are unexpected diagnostics (at their own position) followed by unmet
    expectations (at the annotation), in source order.
    """
    problems: list[Diagnostic] = []
    for diag in diagnostics:
        expectation = next((e for e in expectations if e.accepts(diag)), None)
        if expectation is None:
            problems.append(Diagnostic(f"unexpected {diag.severity}: {diag.message}", diag.pos))
        else:
            expectation.met = True
    for expectation in expectations:
        if not expectation.met:
            problems.append(
                Diagnostic(
                    f'expected {expectation.severity} "{expectation.text}" was not produced',
                    expectation.written_at,
                )
            )
    return problems

