"""Source locations for parsed IR: every op remembers where it was written.

xDSL 0.74's parser leaves ops at `loc(unknown)` unless the text spells out a
`loc(...)`, so diagnostics could not point at a line. `LocatingParser` hooks the
one method every op goes through (`parse_operation`, for top-level and nested
ops alike) and stamps `FileLineColLoc(file, line, col)` of the op's first token
(its result list, as in MLIR). Lines are real file lines: a `--split-input-file`
chunk passes its `line_offset`.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import (
    CallSiteLoc,
    FileLineColLoc,
    FusedLoc,
    IntAttr,
    ModuleOp,
    NameLoc,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation
from xdsl.utils.exceptions import DiagnosticException, ParseError
from xdsl.utils.lexer import Position, Span
from xdsl.utils.mlir_lexer import MLIRTokenKind

from rlx_xdsl.ir.parser import RlxParser


@dataclass(frozen=True)
class SourcePos:
    """A 1-based line and column in a named file."""

    file: str
    line: int
    col: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.col}"


class LineIndex:
    """Maps character offsets of one text (file `name`, starting at line
    `line_offset + 1`) to (line, column), in O(log lines)."""

    def __init__(self, text: str, name: str, line_offset: int = 0):
        self.text = text
        self.name = name
        self.line_offset = line_offset
        self._newlines = [m.start() for m in re.finditer("\n", text)]

    def line_col(self, pos: int) -> tuple[int, int]:
        """1-based (line, column) of `pos`, with the line offset applied."""
        index = bisect.bisect_left(self._newlines, pos)
        line_start = self._newlines[index - 1] + 1 if index else 0
        return index + 1 + self.line_offset, pos - line_start + 1

    def offset(self, line: int, col: int) -> int:
        """The character offset of a (file-relative) line and column in this text."""
        index = line - self.line_offset - 1
        return (self._newlines[index - 1] + 1 if index else 0) + col - 1

    def line_text(self, line: int) -> str | None:
        """The text of a (file-relative) line, or None when it is not in this text."""
        index = line - self.line_offset - 1
        if not 0 <= index <= len(self._newlines):
            return None
        start = self._newlines[index - 1] + 1 if index else 0
        end = self._newlines[index] if index < len(self._newlines) else len(self.text)
        return self.text[start:end]


class LocatingParser(RlxParser):
    """An xDSL `Parser` (with RLX's safe lexer and exact literals, `parser.py`) that
    attaches a `FileLineColLoc` to every op it parses."""

    def __init__(self, ctx: Context, text: str, name: str, line_offset: int = 0):
        super().__init__(ctx, text, name)
        self.file_name = name
        self.lines = LineIndex(text, name, line_offset)
        self._file_attr = StringAttr(name)

    def location_at(self, pos: Position) -> FileLineColLoc:
        line, col = self.lines.line_col(pos)
        return FileLineColLoc(self._file_attr, IntAttr(line), IntAttr(col))

    def current_position(self) -> SourcePos:
        """Where the parser stands now (used to locate errors raised mid-parse)."""
        line, col = self.lines.line_col(self._current_token.span.start)
        return SourcePos(self.file_name, line, col)

    def parse_operation(self) -> Operation:
        start = self._current_token.span.start
        try:
            op = super().parse_operation()
        except (ParseError, RecursionError):
            raise
        except Exception as e:  # e.g. an attribute verifier: blame the op being parsed
            raise ParseError(Span(start, start, self.lexer.input), _construction_error(e)) from e
        if isinstance(op.location, UnknownLoc):  # keep an explicit `loc(...)` from the text
            op.location = self.location_at(start)
        return op

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """Parse the input; an implicit module is located at the text's first line.

        Input without ops (blank, or only comments) is an empty module, as in MLIR.
        """
        try:
            if allow_implicit_module and self._current_token.kind == MLIRTokenKind.EOF:
                module = ModuleOp([])
            else:
                module = super().parse_module(allow_implicit_module)
        except ParseError as e:
            if (use := self._first_undefined_use(e)) is not None:
                raise ParseError(Span(use[0], use[0], self.lexer.input), f"use of undefined value '%{use[1]}'") from e
            raise
        if isinstance(module.location, UnknownLoc):
            module.location = self.location_at(0)
        return module

    def _first_undefined_use(self, error: ParseError) -> tuple[Position, str] | None:
        """xDSL reports undefined values at the end of the input: find the first use
        (offset and value name) to report instead."""
        if not error.msg.startswith("values used but not defined"):
            return None
        for name, values in self.forward_ssa_references.items():
            for value in values.values():
                for use in value.uses:
                    pos = source_pos(use.operation.location)
                    if pos is not None and pos.file == self.file_name:
                        return self.lines.offset(pos.line, pos.col), name
        return None


def _construction_error(error: Exception) -> str:
    """What to say when building a parsed op or attribute raised `error`."""
    text = str(error.args[0]) if error.args else ""
    if isinstance(error, DiagnosticException):
        return text or type(error).__name__
    if isinstance(error, struct.error | OverflowError):
        return f"a number in this operation does not fit its type ({text or 'out of range'})"
    return f"invalid operation: {text}" if text else f"invalid operation ({type(error).__name__})"


def source_pos(loc: Attribute) -> SourcePos | None:
    """The file position a location attribute points at, if it has one."""
    match loc:
        case FileLineColLoc():
            return SourcePos(loc.filename.data, loc.line.data, loc.column.data)
        case NameLoc():
            return source_pos(loc.location)
        case CallSiteLoc():
            return source_pos(loc.callee)
        case FusedLoc():
            return next(filter(None, map(source_pos, loc.locations.data)), None)
        case _:
            return None


def block_labels(loc: Attribute) -> list[str]:
    """The names of the `NameLoc`s in a location (HIR block labels), outermost first, unique.

    `rlx-lower-hir` locates the MIR it produces at `NameLoc(label, <block location>)`;
    a fusion of ops from several blocks has a `FusedLoc` of such locations.
    """
    match loc:
        case NameLoc():
            name = loc.desc.data
            return [name, *(n for n in block_labels(loc.location) if n != name)]
        case CallSiteLoc():
            return block_labels(loc.callee)
        case FusedLoc():
            labels: list[str] = []
            for inner in loc.locations.data:
                labels.extend(n for n in block_labels(inner) if n not in labels)
            return labels
        case _:
            return []


def op_position(op: Operation) -> SourcePos | None:
    """Where `op` was written; ops created by passes report their nearest located ancestor."""
    current: Operation | None = op
    while current is not None:
        if (pos := source_pos(current.location)) is not None:
            return pos
        current = current.parent_op()
    return None
