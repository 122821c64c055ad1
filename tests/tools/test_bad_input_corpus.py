"""A corpus of malformed, hostile and edge-case inputs through every way of running the tools.

The corpus is generated deterministically at test time from a few valid seed
files: truncations, token mutations, bad types and attributes, deep nesting,
hostile bytes, huge shapes and run-time failures (a few hundred files, none
committed). Each file goes through `rlx-opt FILE`, `rlx-opt FILE -o OUT`,
`rlx-opt FILE --split-input-file` and `rlx-run FILE` in-process, plus a handful
through the real executables, and every run must:

* exit with 0 or 1, with no traceback, no "internal error" and no Python exception name;
* on failure, say what went wrong in one located line (`FILE:LINE:COL: error: ...`),
  or `rlx-opt: error:` / `rlx-run: error:` for what has no place in the file;
* leave the input unchanged, and leave `-o`'s target untouched on failure (holding
  exactly what stdout shows on success).
"""

from __future__ import annotations

import os
import random
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from rlx_xdsl.interpreters import checks
from rlx_xdsl.tools import rlx_run
from rlx_xdsl.tools.rlx_opt import run_opt

EXAMPLES = Path(__file__).parents[2] / "examples"

REGIONS_AND_CONSTANTS = """\
func.func @seed(%p: tensor<1xi1>, %a: tensor<2x4xf32> {rlx.name = "layers.0.attn_norm.gamma"}, %ids: tensor<3xi64>) -> (tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x2xi64>) {
  %c = mir.constant dense<[[0.5, -1.0, 0x7FC00000, 0xFF800000], [1.0e-3, 2.0, -0.0, 3.0]]> : tensor<2x4xf32>
  %s = mir.constant dense<2.5e-01> : tensor<4xf32>
  %r = mir.if %p (%a, %c) : (tensor<1xi1>, tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32> {
  ^bb0(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>):
    %z = mir.add %x, %y : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
    mir.yield %z : tensor<2x4xf32>
  } else {
  ^bb0(%x: tensor<2x4xf32>, %y: tensor<2x4xf32>):
    mir.yield %x : tensor<2x4xf32>
  }
  %m = mir.mul %r, %s : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %g = mir.gather %m, %ids axis = 0 : (tensor<2x4xf32>, tensor<3xi64>) -> tensor<3x4xf32>
  %v, %i = mir.topk %m k = 2 : (tensor<2x4xf32>) -> (tensor<2x2xf32>, tensor<2x2xi64>)
  func.return %m, %g, %i : tensor<2x4xf32>, tensor<3x4xf32>, tensor<2x2xi64>
}
"""

SEEDS = {
    "mlp": (EXAMPLES / "mlp.mlir").read_text(),
    "ffn": (EXAMPLES / "ffn_dynamic.mlir").read_text(),
    "llama": (EXAMPLES / "llama_block.mlir").read_text(),
    "regions": REGIONS_AND_CONSTANTS,
}

TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"|[%@^#!]?[A-Za-z_][\w.$-]*|0x[0-9a-fA-F]+|\d+(?:\.\d*)?(?:[eE][+-]?\d+)?|->|\S')

HOSTILE_TOKENS = [
    '"', "{", "}", "(", ")", "<", ">", "[", "]", "%", "#", "!", "^", "@", ":", ",", "=", "->", "?",
    "0x", "0x7FC00000", "1.0e999", "-", "...", "tensor<?x", "dense<", "\x00", "\u202e", '"unterminated',
    "999999999999999999999999", "-0.0", "f80", "i3", "complex<i32>", "tensor<*xf32>", "loc(", "#loc",
    "// -----", "{-#", "#-}", "^bb1", "mir.yield", "func.return", "\ufeff", "\\", "'", ";", "\t\f\v",
]

BAD_SNIPPETS = [
    "%c = mir.constant dense<[1.0, 2.0]> : tensor<3xf32>",
    "%c = mir.constant dense<1.0e39> : tensor<f32>",
    "%c = mir.constant dense<7.0e4> : tensor<2xf16>",
    "%c = mir.constant dense<300> : tensor<i8>",
    "%c = mir.constant dense<-1> : tensor<ui32>",
    '%c = mir.constant dense<"0x0102"> : tensor<3xf32>',
    '%c = mir.constant dense<"0xZZ"> : tensor<1xi8>',
    "%c = mir.constant dense<[[1.0], [2.0, 3.0]]> : tensor<2x2xf32>",
    "%c = mir.constant dense<[(1.0, 2.0)]> : tensor<1xf32>",
    "%c = mir.constant dense<1.0> : tensor<?xf32>",
    "%c = mir.constant dense<1.0> : tensor<4xf80>",
    "%c = mir.constant dense<1> : tensor<4xi3>",
    "%c = mir.constant dense<true> : tensor<2xf32>",
    "%c = mir.constant dense<0x1FFFFFFFF> : tensor<f32>",
    "%c = mir.constant dense<-0x7FC00000> : tensor<f32>",
    "%c = mir.constant dense<1.0> : tensor<99999999999999999999xf32>",
    "%c = mir.constant dense<1.0> : tensor<-3xf32>",
    "%c = mir.constant dense<1.0> : tensor<4xcomplex<i32>>",
    "%c = arith.constant 1.0e39 : f32",
    "%c = arith.constant 300 : i8",
    "%c = arith.constant 1.5 : f80",
    "%c = arith.constant 99999999999999999999999999 : i64",
    "%r = mir.reduce sum %a axes = [99] : (tensor<4xf32>) -> tensor<f32>",
    "%r = mir.reduce sum %a axes = [99999999999999999999999] : (tensor<4xf32>) -> tensor<f32>",
    "%r = mir.reduce bogus %a axes = [0] : (tensor<4xf32>) -> tensor<f32>",
    "%r = mir.softmax %a axis = -7 : (tensor<4xf32>) -> tensor<4xf32>",
    "%r, %i = mir.topk %a k = -1 : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xi64>)",
    "%r = mir.reshape %a new_shape = [-1, -1] : (tensor<4xf32>) -> tensor<2x2xf32>",
    "%r = mir.pool %a kind = sum kernel_size = [2, 2] stride = [1, 1] padding = [0, 0] : (tensor<4xf32>) -> tensor<4xf32>",
    "%r = mir.cast %a : (tensor<4xf32>) -> tensor<4xf80>",
    "%r = mir.cast %a : (tensor<4xf32>) -> tensor<4xindex>",
    "%r = mir.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<*xf32>",
    "%r = mir.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> memref<4xf32>",
    "%r = mir.add %a, %a {rlx.name = 5 : i1} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>",
    "%r = mir.nonexistent %a : (tensor<4xf32>) -> tensor<4xf32>",
    '%r = "mir.add"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    '%r = "unknown.op"(%a) : (tensor<4xf32>) -> tensor<4xf32>',
    "%r = mir.add %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n  %b = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>",
    "%r = mir.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc(unknown)",
    '%r = mir.add %a, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32> loc("x.mlir":99999999999999999999:1)',
]


def in_function(snippet: str) -> str:
    return f"func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {{\n  {snippet}\n  func.return %a : tensor<4xf32>\n}}\n"


RUNTIME_FAILURES = [
    # integer division by zero, pow with a negative exponent, an index out of range
    "func.func @f() -> tensor<2xi32> {\n  %a = mir.constant dense<[7, 8]> : tensor<2xi32>\n  %z = mir.constant dense<[1, 0]> : tensor<2xi32>\n"
    "  %d = mir.div %a, %z : (tensor<2xi32>, tensor<2xi32>) -> tensor<2xi32>\n  func.return %d : tensor<2xi32>\n}\n",
    "func.func @f() -> tensor<2xi64> {\n  %a = mir.constant dense<2> : tensor<2xi64>\n  %e = mir.constant dense<[-1, 1]> : tensor<2xi64>\n"
    "  %d = mir.pow %a, %e : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>\n  func.return %d : tensor<2xi64>\n}\n",
    "func.func @f(%t: tensor<4x2xf32>) -> tensor<1x2xf32> {\n  %i = mir.constant dense<[9]> : tensor<1xi64>\n"
    "  %g = mir.gather %t, %i axis = 0 : (tensor<4x2xf32>, tensor<1xi64>) -> tensor<1x2xf32>\n  func.return %g : tensor<1x2xf32>\n}\n",
    # huge shapes: an input, a splat consumed by an add, a product of dims overflowing int64
    "func.func @f(%x: tensor<100000x100000xf32>) -> tensor<100000x100000xf32> {\n  func.return %x : tensor<100000x100000xf32>\n}\n",
    "func.func @f(%x: tensor<1xf32>) -> tensor<100000x100000xf32> {\n  %c = mir.constant dense<1.0> : tensor<100000x100000xf32>\n"
    "  %d = mir.add %c, %x : (tensor<100000x100000xf32>, tensor<1xf32>) -> tensor<100000x100000xf32>\n  func.return %d : tensor<100000x100000xf32>\n}\n",
    "func.func @f(%x: tensor<4294967296x4294967296xf32>) -> tensor<4294967296x4294967296xf32> {\n"
    "  func.return %x : tensor<4294967296x4294967296xf32>\n}\n",
    "func.func @f() -> tensor<1099511627776x1099511627776xf32> {\n  %c = mir.constant dense<0.0> : tensor<1099511627776x1099511627776xf32>\n"
    "  func.return %c : tensor<1099511627776x1099511627776xf32>\n}\n",
]


def deep_cases() -> dict[str, bytes]:
    return {
        "modules-1000": ("builtin.module {\n" * 1000 + "}\n" * 1000).encode(),
        "modules-20000": ("builtin.module {\n" * 20000 + "}\n" * 20000).encode(),
        "brackets-3000": ("%c = mir.constant dense<" + "[" * 3000 + "1.0" + "]" * 3000 + "> : tensor<1xf32>\n").encode(),
        "parens-5000": ("func.func @f() -> " + "(" * 5000 + "f32" + ")" * 5000 + "\n").encode(),
        "types-5000": ("%c = mir.constant dense<1.0> : " + "tensor<" * 5000 + "f32" + ">" * 5000 + "\n").encode(),
    }


def hostile_byte_cases() -> dict[str, bytes]:
    good = SEEDS["mlp"].encode()
    return {
        "bom": b"\xef\xbb\xbf" + good,
        "bom-twice": b"\xef\xbb\xbf\xef\xbb\xbf" + good,
        "nul-first": b"\x00" + good,
        "nul-inside": good.replace(b"mir.relu", b"mir.re\x00lu"),
        "invalid-utf8": good.replace(b"relu", b"re\xfflu"),
        "truncated-utf8": good + b"\xe2\x82",
        "latin1": "func.func @f() attributes {a = \"caf\xe9\"} {\n  func.return\n}\n".encode("latin-1"),
        "crlf": good.replace(b"\n", b"\r\n"),
        "cr-only": good.replace(b"\n", b"\r"),
        "hash-first": b"# comment\n" + good,
        "semicolon-first": b"; comment\n" + good,
        "control-chars": good.replace(b" ", b"\x01", 3),
        "rtl-override": good.replace(b"mlp", "ml\u202ep".encode()),
        "emoji-string": good.replace(b'"x"', '"\U0001F600"'.encode()),
        "long-unterminated-string": ('func.func @f() attributes {a = "' + "x" * 5000 + " b} {\n  func.return\n}\n").encode(),
        "split-marker-in-string": b'func.func @f() attributes {a = "// -----"} {\n  func.return\n}\n',
        "empty": b"",
        "only-comments": b"// nothing here\n// -----\n// still nothing\n",
        "binary-garbage": bytes(random.Random(7).randrange(256) for _ in range(2000)),
    }


def truncations(name: str, text: str, count: int = 14) -> dict[str, bytes]:
    step = max(1, len(text) // (count + 1))
    return {f"{name}-cut{cut}": text[:cut].encode() for cut in range(step, len(text), step)}


def mutations(name: str, text: str, count: int = 40) -> dict[str, bytes]:
    rng = random.Random(f"rlx-corpus-{name}")
    tokens = [m for m in TOKEN.finditer(text)]
    cases = {}
    for index in range(count):
        m = tokens[rng.randrange(len(tokens))]
        kind = rng.choice(["delete", "duplicate", "swap", "replace", "replace"])
        before, after = text[: m.start()], text[m.end() :]
        if kind == "delete":
            mutated = before + after
        elif kind == "duplicate":
            mutated = before + m.group() + " " + m.group() + after
        elif kind == "swap":
            nxt = next((t for t in tokens if t.start() >= m.end()), m)
            mutated = text[: m.start()] + nxt.group() + text[m.end() : nxt.start()] + m.group() + text[nxt.end() :]
        else:
            mutated = before + rng.choice(HOSTILE_TOKENS) + after
        cases[f"{name}-{kind}{index}"] = mutated.encode()
    return cases


def corpus() -> dict[str, bytes]:
    cases: dict[str, bytes] = {}
    for name, text in SEEDS.items():
        cases |= truncations(name, text)
        cases |= mutations(name, text)
    cases |= {f"bad{i}": in_function(s).encode() for i, s in enumerate(BAD_SNIPPETS)}
    cases |= {f"runtime{i}": t.encode() for i, t in enumerate(RUNTIME_FAILURES)}
    cases |= deep_cases()
    cases |= hostile_byte_cases()
    return cases


CORPUS = corpus()


# Checking one run ---------------------------------------------------------------------------

PYTHON_EXCEPTION = re.compile(r"\b[A-Z]\w*(?:Error|Exception): |error: error: ")
LOCATED = re.compile(r"^(?P<file>.+?):(?P<line>\d+):(?P<col>\d+): error: \S")


@dataclass
class Result:
    status: int
    out: str
    err: str


def check_run(result: Result, path: Path, tool: str) -> None:
    assert result.status in (0, 1), result
    assert "Traceback" not in result.err and "internal error" not in result.err, result.err
    if result.status == 0:
        return
    first = result.err.splitlines()[0] if result.err else ""
    assert not PYTHON_EXCEPTION.search(first), f"a Python exception name reached the user: {first}"
    located = LOCATED.match(first)
    if located:
        assert located["file"] == str(path), first
        assert int(located["line"]) >= 1 and int(located["col"]) >= 1, first
    else:
        assert first.startswith(f"{tool}: error: "), first


@pytest.fixture
def small_memory(monkeypatch):
    """Pretend 64 MiB are free, so huge shapes are refused (not computed) quickly."""
    monkeypatch.setattr(checks, "available_memory", lambda: 64 * 2**20)
    monkeypatch.setattr(checks, "LARGE_RESULT_BYTES", 2**20)


def run_in_process(capsys, fn, argv) -> Result:
    status = fn(argv)
    out, err = capsys.readouterr()
    return Result(status, out, err)


@pytest.mark.usefixtures("small_memory")
def test_the_corpus_is_a_few_hundred_files():
    assert 250 <= len(CORPUS) <= 400


@pytest.mark.usefixtures("small_memory")
@pytest.mark.parametrize("name", sorted(CORPUS))
def test_every_run_fails_cleanly_or_succeeds(name, tmp_path, capsys):
    data = CORPUS[name]
    path = tmp_path / f"{name}.mlir"
    path.write_bytes(data)
    out_file = tmp_path / "out.mlir"
    out_file.write_text("sentinel\n")

    plain = run_in_process(capsys, run_opt, [str(path)])
    check_run(plain, path, "rlx-opt")
    if plain.status == 1:
        assert plain.out == "", "no partial output without --split-input-file"

    written = run_in_process(capsys, run_opt, [str(path), "-o", str(out_file)])
    check_run(written, path, "rlx-opt")
    assert written.status == plain.status
    assert out_file.read_text() == (plain.out if written.status == 0 else "sentinel\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([path.name, out_file.name])

    check_run(run_in_process(capsys, run_opt, [str(path), "--split-input-file"]), path, "rlx-opt")
    check_run(run_in_process(capsys, rlx_run.main, [str(path)]), path, "rlx-run")
    assert path.read_bytes() == data, "the input must never change"


def test_runtime_failures_are_located_at_their_op(tmp_path, capsys, small_memory):
    expected = {
        0: "interpretation failed: 'mir.div' integer division by zero",
        1: "interpretation failed: 'mir.pow' integer power with a negative exponent (-1)",
        2: "interpretation failed: 'mir.gather' index 9 is out of range [-4, 4)",
        4: "interpretation failed: 'mir.add' result tensor<100000x100000xf32> would need 40000000000 bytes (37.3 GiB)",
    }
    for index, message in expected.items():
        path = tmp_path / f"r{index}.mlir"
        path.write_text(RUNTIME_FAILURES[index])
        result = run_in_process(capsys, rlx_run.main, [str(path)])
        assert result.status == 1
        assert message in result.err.splitlines()[0] and LOCATED.match(result.err), result.err


SUBPROCESS_CASES = ["nul-first", "long-unterminated-string", "runtime3"]


@pytest.mark.parametrize("name", SUBPROCESS_CASES)
def test_the_real_executables_never_show_a_traceback(name, tmp_path):
    path = tmp_path / f"{name}.mlir"
    path.write_bytes(CORPUS[name])
    bin_dir = Path(sys.executable).parent
    env = {k: v for k, v in os.environ.items() if k != "RLX_DEBUG"}
    for tool in ("rlx-opt", "rlx-run"):
        done = subprocess.run([bin_dir / tool, path], capture_output=True, text=True, env=env, timeout=300)
        check_run(Result(done.returncode, done.stdout, done.stderr), path, tool)


def test_split_mode_reports_first_token_errors_in_file_coordinates_and_goes_on(tmp_path, capsys):
    text = "# not a comment\n// -----\nfunc.func @ok() {\n  func.return\n}\n// -----\n\n; nor this\n"
    path = tmp_path / "chunks.mlir"
    path.write_text(text)
    result = run_in_process(capsys, run_opt, [str(path), "--split-input-file"])
    assert result.status == 1
    errors = [line for line in result.err.splitlines() if ": error: " in line]
    assert errors == [
        f"{path}:1:1: error: expected an identifier after '#', found U+0020",
        f"{path}:8:1: error: unexpected character ';'",
    ]
    assert "func.func @ok()" in result.out
