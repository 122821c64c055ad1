"""Reading IR text: parse with source locations, verify, and report located errors.

The one parse-verify-locate flow shared by `rlx-opt`, `rlx-run` and the Python
API. Every op gets a `FileLineColLoc`; any failure is a `SourceError` holding a
`Diagnostic` at the offending place and the text's `LineIndex` to render it.
"""

from __future__ import annotations

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from rlx_xdsl.diagnostics import (
    Diagnostic,
    OpError,
    describe,
    op_diagnostic,
    parse_error_diagnostic,
    verify_located,
)
from rlx_xdsl.locations import LineIndex, LocatingParser

SPLIT_MARKER = "// -----"
"""The chunk separator of `--split-input-file`."""


def split_chunks(text: str) -> list[tuple[str, int]]:
    """`text` split at `// -----`, each chunk with the number of lines before it."""
    chunks, offset = [], 0
    for chunk in text.split(SPLIT_MARKER):
        chunks.append((chunk, offset))
        offset += chunk.count("\n")
    return chunks


class SourceError(Exception):
    """A parse or verifier error at a place in the source text."""

    def __init__(self, diagnostic: Diagnostic, source: LineIndex):
        super().__init__(diagnostic.message)
        self.diagnostic = diagnostic
        self.source = source


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
    parser = LocatingParser(ctx, text, name, line_offset)
    try:
        module = parser.parse_module(allow_implicit_module)
    except ParseError as e:
        raise SourceError(parse_error_diagnostic(e, parser), parser.lines) from None
    except Exception as e:  # e.g. an attribute verifier firing while parsing
        raise SourceError(Diagnostic(describe(e), parser.current_position()), parser.lines) from None
    if verify:
        try:
            verify_located(module)
        except OpError as e:
            raise SourceError(op_diagnostic(e.op, e.message, e.note), parser.lines) from None
    return module, parser.lines
