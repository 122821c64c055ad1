"""The MLIR lexer of the pinned xDSL, made safe for any input (`RlxLexer`).

It fixes what the upstream lexer gets wrong on bad input:

* a string literal without its closing quote made the upstream regex backtrack
  exponentially (28 characters left on the line took over 100 s); we match
  strings with a possessive pattern and report `unterminated string literal`;
* an unexpected character after `#`, `!`, `^` or `%` gave a message with an
  unfilled `{first_char}`, and control characters were printed raw.

`is_hex_literal` tells a float given as its bit pattern (`0x7FC00000`), which the
parser and `literals.py` both read.
"""

from __future__ import annotations

import re
from typing import NoReturn

from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Position, Span, Token
from xdsl.utils.mlir_lexer import MLIRLexer, MLIRToken, MLIRTokenKind


def describe_char(char: str) -> str:
    """`'#'`, or `U+0000` for characters a terminal would not show."""
    return f"'{char}'" if char.isprintable() and not char.isspace() else f"U+{ord(char):04X}"


_SUFFIX_ID = r"(?:[0-9]+|[a-zA-Z$._-][a-zA-Z0-9$._-]*)"

_COMMON_TOKEN = re.compile(
    r"(?:[ \t\n\r\f\v]++|//[^\n]*+\n?)*+"  # whitespace and comments as upstream skips them (never given back)
    r"(?:(?P<BARE_IDENT>[a-zA-Z_][a-zA-Z0-9_$.]*)"
    rf"|(?P<PERCENT_IDENT>%{_SUFFIX_ID})"
    r"|(?P<HASH_IDENT>#(?:[0-9]+|[a-zA-Z$._][a-zA-Z0-9$._-]*))"  # not `#-`: `#-}` ends file metadata
    rf"|(?P<EXCLAMATION_IDENT>!{_SUFFIX_ID})"
    rf"|(?P<CARET_IDENT>\^{_SUFFIX_ID})"
    r"|(?P<ARROW>->)"
    r"|(?P<INTEGER_LIT>0x[0-9a-fA-F]+|[0-9]+(?![.0-9]))"
    r"|(?P<FLOAT_LIT>[0-9]+\.[0-9]*(?:[eE][+-]?[0-9]+)?)"
    r"|(?P<PUNCTUATION>[-:,()}\[\]<>=+/*?|]))"
)
"""The tokens MIR text is made of, as xDSL's lexer reads them: identifiers, SSA names,
numbers and one-character punctuation (anything else goes the upstream way)."""

_KINDS = {name: getattr(MLIRTokenKind, name) for name in _COMMON_TOKEN.groupindex if name != "PUNCTUATION"}
_PUNCTUATION = {kind.value: kind for kind in MLIRTokenKind if isinstance(kind.value, str) and len(kind.value) == 1}


class RlxLexer(MLIRLexer):
    """xDSL's MLIR lexer without its exponential string regex and unfilled messages, and
    faster: the common tokens come from one regular expression (`_COMMON_TOKEN`), where
    upstream tests the next character against each kind in turn (and builds a table of
    punctuation per token); a lexer run costs a third of a MIR parse otherwise."""

    _string_body = r'(?:[^"\\\n\v\f]|\\(?:["nt\\]|[0-9A-Fa-f]{2}))*+'
    _string_prefix = re.compile('"' + _string_body)
    """A string's opening quote and as much valid content as follows, without backtracking."""

    def lex(self) -> MLIRToken:
        match = _COMMON_TOKEN.match(self.input.content, self.pos)
        if match is not None:
            kind_name = match.lastgroup
            start, end = match.span(kind_name)
            self.pos = end
            kind = _PUNCTUATION[match.group(kind_name)] if kind_name == "PUNCTUATION" else _KINDS[kind_name]
            return Token(kind, Span(start, end, self.input))  # the class itself: `MLIRToken` is a slower alias
        return self.lex_upstream_way()

    def lex_upstream_way(self) -> MLIRToken:
        """The next token as xDSL's lexer reads it (with our messages)."""
        try:
            return super().lex()
        except ParseError as e:
            if e.msg.startswith("Unexpected character"):
                char = self.input.content[e.span.start]
                raise ParseError(e.span, f"unexpected character {describe_char(char)}") from None
            raise

    def _lex_string_literal(self, start_pos: Position) -> MLIRToken:
        content = self.input.content
        end = self._string_prefix.match(content, start_pos).end()
        if end >= len(content) or content[end] != '"':
            self._bad_string(start_pos, end)
        return super()._lex_string_literal(start_pos)  # fast: the closing quote is there

    def _bad_string(self, start: Position, end: Position) -> NoReturn:
        content = self.input.content
        stop = content[end] if end < len(content) else ""
        if stop == "\\":
            escape = content[end : end + 3]
            message = f"invalid escape sequence '{escape}' in string literal (use \\n, \\t, \\\\, \\\" or \\XX)"
            raise ParseError(Span(end, end + 1, self.input), message)
        if stop in ("\v", "\f"):
            raise ParseError(Span(end, end + 1, self.input), f"{describe_char(stop)} is not allowed in a string literal")
        raise ParseError(Span(start, start + 1, self.input), "unterminated string literal (missing closing '\"')")

    def _lex_prefixed_ident(self, start_pos: Position) -> MLIRToken:
        if self._suffix_id.match(self.input.content, self.pos) is None:
            prefix = self.input.content[start_pos]
            rest = self.input.content[self.pos : self.pos + 1]
            found = f", found {describe_char(rest)}" if rest else ""
            raise ParseError(Span(start_pos, self.pos, self.input), f"expected an identifier after '{prefix}'{found}")
        return super()._lex_prefixed_ident(start_pos)


def is_hex_literal(text: str) -> bool:
    """`0x7FC00000` (with an optional sign): a bit pattern in a float context."""
    return text.lstrip("-+").lower().startswith("0x")
