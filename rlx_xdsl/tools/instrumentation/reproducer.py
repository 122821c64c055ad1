"""Crash reproducers: `--mlir-pass-pipeline-crash-reproducer`, `--run-reproducer`.

A reproducer is the IR a failing pipeline started from, followed by MLIR's
resource trailer naming the pipeline that fails on it:

    {-#
      external_resources: {
        mlir_reproducer: {
          pipeline: "builtin.module(rlx-dce,func.func(cse))",
          disable_threading: true,
          verify_each: true
        }
      }
    #-}

`--mlir-pass-pipeline-local-reproducer` narrows it to the failing pass and the
IR that pass was given.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_xdsl.transforms.instrument import PassInstrumentation
from rlx_xdsl.transforms.options import spelled
from rlx_xdsl.transforms.pipeline import ROOT_ANCHOR, AnchoredPipelinePass


def pass_text(pass_: ModulePass) -> str:
    """`pass_` spelled out with every option's value, as a pipeline accepts it back."""
    if isinstance(pass_, AnchoredPipelinePass):
        return f"{pass_.anchor}({','.join(map(pass_text, pass_.passes))})"
    return spelled(pass_, include_default=True)


def pipeline_text(passes: Sequence[ModulePass]) -> str:
    """The `--pass-pipeline` text of `passes` (run on the root module), every option spelled out."""
    return f"{ROOT_ANCHOR}({','.join(map(pass_text, passes))})"


# Writing ------------------------------------------------------------------------------------


def reproducer_text(ir: str, pipeline: str, verify_each: bool) -> str:
    """`ir` followed by the trailer naming `pipeline`, as MLIR writes a reproducer."""
    flag = "true" if verify_each else "false"
    return (
        f"{ir.rstrip()}\n\n{{-#\n  external_resources: {{\n    mlir_reproducer: {{\n"
        f'      pipeline: "{_escape(pipeline)}",\n      disable_threading: true,\n      verify_each: {flag}\n'
        "    }\n  }\n#-}\n"
    )


def _escape(text: str) -> str:
    """A string literal's body as MLIR prints it: `"`, `\\` and non-printable characters as `\\XX`."""
    return "".join(c if c.isprintable() and c not in '"\\' else f"\\{ord(c):02X}" for c in text)


@dataclass
class CrashReproducer(PassInstrumentation):
    """Writes a reproducer to `path` when a pass fails: the pipeline's input and the whole
    pipeline, or (`local`) the failing pass's input and that pass alone, nested in its anchors."""

    path: str
    local: bool
    passes: Sequence[ModulePass]
    verify_each: bool
    print_ir: Callable[[Operation], str]
    write_file: Callable[[str, str], None]
    note: str | None = None
    """Set once the reproducer is written: what rlx-opt tells the user."""

    _input: str = ""
    _anchors: list[str] = field(default_factory=list[str])
    _written: bool = False

    def start(self, module: ModuleOp) -> None:
        """A new input: the pipeline is about to run on `module`."""
        self._written = False
        if not self.local:
            self._input = self.print_ir(module)

    def before_pass(self, pass_: ModulePass, op: Operation) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._anchors.append(pass_.anchor)
        elif self.local:
            self._input = self.print_ir(_root(op))

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._anchors.pop()

    def after_pass_failed(self, pass_: ModulePass, ops: Sequence[Operation], error: BaseException) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            self._anchors.pop()
            return
        if self._written or not isinstance(error, Exception):  # not for Ctrl-C
            return
        self._written = True
        if self.local:
            pipeline = pass_text(pass_)
            for anchor in reversed(self._anchors):
                pipeline = f"{anchor}({pipeline})"
            pipeline = f"{ROOT_ANCHOR}({pipeline})"
        else:
            pipeline = pipeline_text(self.passes)
        where = f"'{ops[0].name}' operation" if ops else "an erased operation"
        failed = f"pipeline failed while executing '{pass_.name}' on {where}"
        try:
            self.write_file(self.path, reproducer_text(self._input, pipeline, self.verify_each))
        except Exception as e:  # the pass's own error must still be reported
            self.note = f"{failed}: no reproducer: {e}"
            return
        self.note = f"{failed}: reproducer generated at '{self.path}'"


def _root(op: Operation) -> Operation:
    while (parent := op.parent_op()) is not None:
        op = parent
    return op


# Reading ------------------------------------------------------------------------------------


class ReproducerError(Exception):
    """The file is not a reproducer, or its trailer is corrupt; `str()` says which and where."""


@dataclass(frozen=True)
class Reproducer:
    ir: str
    """The IR, the trailer cut off (lines keep their numbers)."""
    pipeline: str
    verify_each: bool


def read_reproducer(text: str, name: str) -> Reproducer:
    """Split a reproducer into its IR and the pipeline of its `mlir_reproducer` trailer."""
    start = text.rfind("{-#")
    if start < 0 or not text.rstrip().endswith("#-}"):
        raise ReproducerError(
            f"{name}: not a reproducer: it does not end in a "
            "'{-# external_resources: { mlir_reproducer: {...} } #-}' trailer"
        )
    reader = _TrailerReader(text, name, start + 3)
    entries = reader.dictionary(end="#-}")
    external = entries.get("external_resources")
    reproducer = external.get("mlir_reproducer") if isinstance(external, dict) else None
    if not isinstance(reproducer, dict):
        raise ReproducerError(
            f"{name}: not a reproducer: its trailer has no 'external_resources: {{ mlir_reproducer: ... }}' "
            f"(keys: {', '.join(entries) or 'none'}); was it written by another tool?"
        )
    pipeline = reproducer.get("pipeline")
    if not isinstance(pipeline, str):
        raise ReproducerError(f"{name}: corrupt reproducer: 'mlir_reproducer' has no pipeline string")
    verify_each = reproducer.get("verify_each", True)
    if not isinstance(verify_each, bool):
        raise ReproducerError(f"{name}: corrupt reproducer: 'verify_each' must be true or false")
    return Reproducer(text[:start], pipeline, verify_each)


_TOKEN = re.compile(r'\s*(?:(#-\}|[{}:,])|"((?:[^"\\\n]|\\.)*)"|([A-Za-z_][A-Za-z0-9_.$-]*|-?[0-9][0-9.eE+-]*))')

class _TrailerReader:
    """Reads the `key: value, ...` dictionaries of a `{-# ... #-}` trailer."""

    def __init__(self, text: str, name: str, pos: int):
        self.text, self.name, self.pos = text, name, pos

    def error(self, message: str, pos: int) -> ReproducerError:
        line = self.text.count("\n", 0, pos) + 1
        column = pos - (self.text.rfind("\n", 0, pos) + 1) + 1
        return ReproducerError(f"{self.name}:{line}:{column}: corrupt reproducer trailer: {message}")

    def token(self) -> tuple[str, str, int]:
        """The next token as (kind, text, position): kind is 'punct', 'string' or 'word'."""
        match = _TOKEN.match(self.text, self.pos)
        if match is None:
            pos = len(self.text) - len(self.text[self.pos :].lstrip())  # the first character not a space
            found = f"unexpected '{self.text[pos]}'" if pos < len(self.text) else "unexpected end of file"
            raise self.error(found, pos)
        self.pos = match.end()
        punct, string, word = match.groups()
        if punct is not None:
            return "punct", punct, match.start(1)
        if string is not None:
            return "string", _unescape(string), match.start(2) - 1
        return "word", word, match.start(3)

    def expect(self, text: str, after: str) -> None:
        kind, found, pos = self.token()
        if found != text or kind != "punct":
            raise self.error(f"expected '{text}' {after}, found '{found}'", pos)

    def dictionary(self, end: str = "}") -> dict:
        entries: dict = {}
        while True:
            kind, key, pos = self.token()
            if kind == "punct" and key == end and not entries:
                return entries
            if kind != "word":
                raise self.error(f"expected a key, found '{key}'", pos)
            self.expect(":", f"after '{key}'")
            entries[key] = self.value()
            kind, found, pos = self.token()
            if found == end and kind == "punct":
                return entries
            if found != "," or kind != "punct":
                raise self.error(f"expected ',' or '{end}' after the value of '{key}', found '{found}'", pos)

    def value(self):
        kind, text, pos = self.token()
        if kind == "string":
            return text
        if kind == "punct" and text == "{":
            return self.dictionary()
        if kind == "word" and text in ("true", "false"):
            return text == "true"
        if kind == "word":
            return text
        raise self.error(f"expected a value, found '{text}'", pos)


def _unescape(text: str) -> str:
    """The inverse of `_escape`; `\\n`, `\\t`, `\\"`, `\\\\` too."""
    simple = {"n": "\n", "t": "\t", '"': '"', "\\": "\\"}

    def one(match: re.Match[str]) -> str:
        code = match.group(1)
        return simple[code] if code in simple else chr(int(code, 16))

    return re.sub(r'\\([0-9A-Fa-f]{2}|[nt"\\])', one, text)
