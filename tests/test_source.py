"""Reading source text: decoding, splitting, first-token errors, and deep nesting."""

from __future__ import annotations

import numpy as np
import pytest

from rlx_xdsl.context import make_context
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.ir.source import (
    SPLIT_MARKER,
    TOO_DEEP,
    SourceError,
    decode,
    parse_source,
    split_chunks,
)
from rlx_xdsl.run import run_function
from rlx_xdsl.tools.deep import run_deep

CTX = make_context()


def test_a_byte_order_mark_is_skipped():
    text = decode(b"\xef\xbb\xbffunc.func @f() {\n  func.return\n}\n", "t.mlir")
    assert text.startswith("func.func")
    parse_source(CTX, text, "t.mlir")


def test_invalid_utf8_is_located_at_the_bad_byte():
    with pytest.raises(SourceError) as info:
        decode(b"ok\n  ab\xff\n", "t.mlir")
    d = info.value.diagnostic
    assert (d.pos.line, d.pos.col, d.message) == (2, 5, "invalid UTF-8 (byte 0xFF at offset 7)")


def test_markers_split_except_inside_strings():
    text = f'a\n{SPLIT_MARKER}\nb "x {SPLIT_MARKER} y"\n// note "{SPLIT_MARKER}\nc {SPLIT_MARKER} d'
    chunks = split_chunks(text)
    assert [c for c, _ in chunks] == ["a\n", f'\nb "x {SPLIT_MARKER} y"\n// note "', "\nc ", " d"]
    assert [offset for _, offset in chunks] == [0, 1, 3, 4]


def test_an_escaped_quote_does_not_end_the_string():
    text = f'x = "a \\" {SPLIT_MARKER} b"\n'
    assert len(split_chunks(text)) == 1


def test_first_token_errors_in_a_later_chunk_are_in_file_coordinates():
    text = f"func.func @f() {{\n  func.return\n}}\n{SPLIT_MARKER}\n# bad\n"
    (first, _), (second, offset) = split_chunks(text)
    parse_source(CTX, first, "t.mlir")
    with pytest.raises(SourceError) as info:
        parse_source(CTX, second, "t.mlir", line_offset=offset)
    d = info.value.diagnostic
    assert (d.pos.line, d.pos.col) == (5, 1)


def nested_ifs(depth: int) -> str:
    """`depth` nested `mir.if`s passing one i1 value down and back (one op per line, no
    indentation, so the text stays linear in `depth`); the innermost op negates it."""
    t = "tensor<1xi1>"
    head = f"%r{{d}} = mir.if %q{{d}} (%q{{d}}) : ({t}, {t}) -> {t} {{{{"
    lines = [f"func.func @main(%q0: {t}) -> {t} {{", head.format(d=0)]
    for d in range(1, depth):
        lines += [f"^bb0(%q{d}: {t}):", head.format(d=d)]
    lines += [f"^bb0(%q{depth}: {t}):", f"%y = mir.sub %q{depth}, %q{depth} : ({t}, {t}) -> {t}", f"mir.yield %y : {t}"]
    for d in range(depth - 1, -1, -1):
        lines += ["} else {", f"^bb0(%e{d}: {t}):", f"mir.yield %e{d} : {t}", "}"]
        lines.append(f"mir.yield %r{d} : {t}" if d else f"func.return %r0 : {t}")
    return "\n".join(lines) + "\n}\n"


def test_ir_nested_1000_deep_parses_verifies_runs_and_prints():
    def work():
        module, _ = parse_source(CTX, nested_ifs(1000), "deep.mlir")
        (out,) = run_function(module, "main", [np.array([True])])
        return out, print_ir(module)

    out, text = run_deep(work)
    assert out.tolist() == [False]  # true - true, computed 1,000 levels down
    assert text.count("mir.if") == 1000


def test_deeper_nesting_is_a_located_error():
    text = "builtin.module {\n" * 20000 + "}\n" * 20000
    with pytest.raises(SourceError) as info:
        run_deep(lambda: parse_source(CTX, text, "deep.mlir"))
    d = info.value.diagnostic
    assert d.message == TOO_DEEP and d.pos.file == "deep.mlir" and d.pos.line > 1000
