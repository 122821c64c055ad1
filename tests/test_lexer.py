"""`RlxLexer`'s fast path reads every text exactly as xDSL's lexer does: the same tokens
(kind and span) and the same error at the same place, on every lit input, the examples,
the LLaMA graph, the bad-input corpus and random MLIR-like text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.utils.exceptions import ParseError
from xdsl.utils.lexer import Input
from xdsl.utils.mlir_lexer import MLIRTokenKind

from rlx_xdsl.ir.lexer import RlxLexer
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.testing.corpus import examples, lit_inputs
from rlx_xdsl.testing.llama import build_llama

ROOT = Path(__file__).resolve().parents[1]


class UpstreamWayLexer(RlxLexer):
    """The reference: every token read the upstream way."""

    def lex(self):
        return self.lex_upstream_way()


def tokens(lexer_class: type[RlxLexer], text: str) -> list[tuple]:
    """Every token as (kind, start, end), ending with EOF or the error and where it is."""
    lexer = lexer_class(Input(text, "t.mlir"))
    found = []
    while True:
        try:
            token = lexer.lex()
        except ParseError as e:
            return [*found, ("error", e.span.start, e.msg)]
        found.append((token.kind, token.span.start, token.span.end))
        if token.kind == MLIRTokenKind.EOF:
            return found


def files() -> list[Path]:
    return [*lit_inputs(), *examples()]


@pytest.mark.parametrize("path", files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_same_tokens_as_upstream_on_every_lit_input_and_example(path):
    text = path.read_text()
    assert tokens(RlxLexer, text) == tokens(UpstreamWayLexer, text)


def test_same_tokens_as_upstream_on_the_llama_graph():
    text = print_ir(build_llama(2))
    fast = tokens(RlxLexer, text)
    assert fast == tokens(UpstreamWayLexer, text)
    assert len(fast) > 1000


def test_same_tokens_and_errors_as_upstream_on_the_bad_input_corpus():
    from tests.tools.test_bad_input_corpus import corpus

    for name, data in corpus().items():
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        assert tokens(RlxLexer, text) == tokens(UpstreamWayLexer, text), name


TRICKY = [
    "0x1F 0x 0xg 00x1 1. 1.5e 1.5e+3 1.e-2 12 -3 ->- -> --",
    "%0abc %-a %$ %. #-} #-a #a-b #1 !a ^bb0 ^ % # !",
    "// comment\n%x // trailing\n//\n//x",
    "a.b$c _x x1 é ¹ \u00a0 \t\r\f\v",
    "{-# x #-} {a} [1, 2] (x) <y> = + / * ? | ... .. .",
    '"s" "a\\"b" "unterminated',
]


@pytest.mark.parametrize("text", TRICKY)
def test_same_tokens_as_upstream_on_tricky_text(text):
    assert tokens(RlxLexer, text) == tokens(UpstreamWayLexer, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("%#!^@-.>:,(){}[]<>=+/*?|\"0123456789xXeEaz_$é \n\t/")), max_size=40))
def test_same_tokens_as_upstream_on_random_text(text):
    assert tokens(RlxLexer, text) == tokens(UpstreamWayLexer, text)
