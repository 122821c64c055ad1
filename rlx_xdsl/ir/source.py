"""Reading IR text: decode, split, parse with source locations, verify, and report
located errors.

The one read-parse-verify-locate flow shared by `rlx-opt`, `rlx-run` and the
Python API. Every op gets a `FileLineColLoc`; any failure is a `SourceError`
holding a `Diagnostic` at the offending place and the text's `LineIndex` to
render it. No input a user can write ends in a Python exception: invalid UTF-8,
a byte order mark, a bad first token, input nested too deeply and crashing
attribute constructors all become located diagnostics.
"""

from __future__ import annotations

import re

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from rlx_xdsl.ir.diagnostics import (
    Diagnostic,
    OpError,
    describe,
    op_diagnostic,
    parse_error_diagnostic,
    verify_located,
)
from rlx_xdsl.ir.locations import LineIndex, LocatingParser, SourcePos

SPLIT_MARKER = "// -----"
"""The chunk separator of `--split-input-file`."""

BYTE_ORDER_MARK = "\ufeff"

TOO_DEEP = "the input is nested too deeply (Python's recursion limit was reached)"


class SourceError(Exception):
    """A parse or verifier error at a place in the source text."""

    def __init__(self, diagnostic: Diagnostic, source: LineIndex):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.source = source


def decode(data: bytes, name: str) -> str:
    """UTF-8 `data` as text, without a leading byte order mark (MLIR accepts one).

    Invalid UTF-8 is a `SourceError` at the line and column of the first bad byte.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        good = data[: e.start].decode("utf-8")
        lines = LineIndex(good, name)
        line, col = lines.line_col(len(good))
        diag = Diagnostic(f"invalid UTF-8 (byte 0x{data[e.start]:02X} at offset {e.start})", SourcePos(name, line, col))
        raise SourceError(diag, lines) from None
    return text[1:] if text.startswith(BYTE_ORDER_MARK) else text


def split_chunks(text: str) -> list[tuple[str, int]]:
    """`text` split at `// -----`, each chunk with the number of lines before it.

    A marker inside a string literal (`"a // ----- b"`) is text, not a separator;
    anywhere else on a line (a comment included) it splits.
    """
    chunks, offset, start = [], 0, 0
    for cut in _split_points(text):
        chunk = text[start:cut]
        chunks.append((chunk, offset))
        offset += chunk.count("\n")
        start = cut + len(SPLIT_MARKER)
    chunks.append((text[start:], offset))
    return chunks


def _split_points(text: str) -> list[int]:
    """Offsets of the markers that are outside string literals."""
    points = []
    for match in re.finditer(re.escape(SPLIT_MARKER), text):
        line_start = text.rfind("\n", 0, match.start()) + 1
        if not _inside_string(text[line_start : match.start()]):
            points.append(match.start())
    return points


def _inside_string(line_prefix: str) -> bool:
    """Whether the end of `line_prefix` lies inside a string literal (strings cannot
    span lines); a `//` outside a string starts a comment, where quotes are text."""
    in_string, i = False, 0
    while i < len(line_prefix):
        char = line_prefix[i]
        if in_string:
            if char == "\\":
                i += 1
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif line_prefix.startswith("//", i):
            return False
        i += 1
    return in_string


def parse_source(
    ctx: Context,
    text: str,
    name: str,
    *,
    line_offset: int = 0,
    allow_implicit_module: bool = True,
    verify: bool = True,
) -> tuple[ModuleOp, LineIndex]:
    """Parse `text` (file `name`, starting at line `line_offset + 1`) and verify it.

    Returns the module and the line index of `text` for later diagnostics.
    """
    lines = LineIndex(text, name, line_offset)
    parser = None
    try:
        parser = LocatingParser(ctx, text, name, line_offset)
        module = parser.parse_module(allow_implicit_module)
    except ParseError as e:
        raise SourceError(parse_error_diagnostic(e, lines), lines) from None
    except RecursionError:
        raise SourceError(Diagnostic(TOO_DEEP, _position(parser, lines)), lines) from None
    except Exception as e:  # e.g. an attribute verifier firing while parsing
        raise SourceError(Diagnostic(describe(e), _position(parser, lines)), lines) from None
    if verify:
        verify_source(module, lines)
    return module, lines


def verify_source(module: ModuleOp, lines: LineIndex) -> None:
    """Verify a module parsed from `lines`; a failure is a `SourceError` at the offending op."""
    try:
        verify_located(module)
    except OpError as e:
        raise SourceError(op_diagnostic(e.op, e.message, e.note), lines) from None
    except RecursionError:
        raise SourceError(Diagnostic(TOO_DEEP, _position(None, lines)), lines) from None


def _position(parser: LocatingParser | None, lines: LineIndex) -> SourcePos:
    """Where the parser stopped, or the start of the text."""
    if parser is not None:
        return parser.current_position()
    line, col = lines.line_col(0)
    return SourcePos(lines.name, line, col)
