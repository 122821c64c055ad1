"""Pass pipelines in MLIR's textual syntax, with op anchoring.

Accepted forms (identical meaning):

    -p 'rlx-dce,func.func(cse,rlx-fusion-pipeline{target=best})'
    --pass-pipeline='builtin.module(rlx-dce,func.func(cse,rlx-fusion-pipeline{target=best}))'

Grammar:

    pipeline ::= element (`,` element)*
    element  ::= anchor `(` pipeline? `)` | pass-name (`{` options `}`)? | `mlir-opt[` ... `]`
    anchor   ::= `builtin.module` | `func.func`
    options  ::= option (` ` option)*
    option   ::= key (`=` value (`,` value)*)?

Option values are written as in MLIR: `rlx-specialize{shapes=x=2x128,w=128x64}`
needs no quotes although its values hold `=`. xDSL's own option lexer only
takes identifiers, numbers and quoted strings as values, so every other value
is quoted before xDSL parses the options (`_normalize_options`); quoted input
(`shapes="x=2x128","w=128x64"`) is left as it is and means the same; it is the
form stock `xdsl-opt` needs. Each pass's options are checked against its fields
before it is built (`options.check_options`), so a bad option is a usage error
that names it as written.

xDSL passes are all `ModulePass`es over the whole module. An anchored group
`func.func(p, q)` really runs `p` then `q` on each function *separately*: each
function is moved into a temporary module of its own while a pass runs on it, so
the pass cannot see (or change) its siblings, as with MLIR's nested pass managers.
`builtin.module(...)` inside the root anchors modules nested in the root module.
"""

from __future__ import annotations

import re
import string
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import parse_spec
from xdsl.utils.exceptions import ArgSpecParseError

from rlx_xdsl.ir import sharding  # noqa: F401  (registers the verifier of rlx.mesh and rlx.sharding)
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.suggest import did_you_mean
from rlx_xdsl.transforms.instrument import pass_scope, verify_scope
from rlx_xdsl.transforms.options import OptionError, check_options, quote_value, spelled

ROOT_ANCHOR = "builtin.module"
FUNC_ANCHOR = "func.func"
NESTED_ANCHORS = {ROOT_ANCHOR: (ROOT_ANCHOR, FUNC_ANCHOR), FUNC_ANCHOR: ()}
"""For each anchor, the anchors that may be nested inside it."""

PassRegistry = dict[str, Callable[[], type[ModulePass]]]


class PipelineError(Exception):
    """A malformed pipeline; `str()` is a complete, user-facing message."""

    def __init__(self, message: str, text: str | None = None, pos: int | None = None):
        if text is not None and pos is not None:
            message += f"\n  {text}\n  {' ' * pos}^"
        super().__init__(message)


class PassFailure(Exception):
    """A pass raised `cause` while running on `op` (the op its anchor selected)."""

    def __init__(self, pass_: ModulePass, op: Operation, cause: Exception):
        super().__init__(f"pass '{pass_.name}' failed: {cause}")
        self.pass_ = pass_
        self.cause = cause
        # A pass that raised an `OpError` knows better which op is wrong.
        self.op = cause.op if isinstance(cause, OpError) else op


class ReportsChanges:
    """Mixin of a pass that tells the pipeline when it left the IR as it found it.

    mlir-opt verifies after each pass unless the pass preserved all analyses, i.e.
    did not touch the IR: what the last verification accepted is still valid. Such
    a pass implements `apply_and_report`, which returns False only when the IR is
    exactly as it was; any other pass counts as having changed it.
    """

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        """Run the pass; whether it may have changed the IR."""
        raise NotImplementedError

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        self.apply_and_report(ctx, op)


class KeepsPlansValid:
    """Mixin of a pass that may run on planned (LIR) functions: it leaves their plans valid.

    A memory plan is proved against the exact ops of its function (their order,
    types and placements), so almost any rewrite invalidates it: an erased op
    changes the plan's figures, a new op has no slot, a retyped value no longer
    fits its slot. Passes therefore refuse a planned function up front (`run_pass`),
    with a located error saying to run them before `rlx-plan-memory`, unless they
    carry this mixin: `rlx-plan-memory` itself (it re-plans) and the lowering to
    linalg (it drops the plan).
    """


def refuse_planned(pass_: ModulePass, module: ModuleOp) -> None:
    """Raise an `OpError` at the plan of the first planned function in `module`, unless `pass_` keeps plans valid."""
    lir = sys.modules.get("rlx_xdsl.dialects.lir")
    if isinstance(pass_, KeepsPlansValid) or lir is None:  # no plan exists before LIR is imported,
        return  # and most runs never import it (it costs every rlx-opt process ~20 ms)
    for function in _functions(module):
        plan = lir.plan_of(function)
        if plan is not None:
            raise OpError(
                plan,
                f"{pass_.name} cannot run on a planned function (@{function.sym_name.data} has an lir.plan); "
                "run it before rlx-plan-memory",
            )


def _functions(module: ModuleOp) -> Iterator[func.FuncOp]:
    """The functions of `module` and of the modules nested in it (not those inside function bodies)."""
    for op in module.ops:
        if isinstance(op, func.FuncOp):
            yield op
        elif isinstance(op, ModuleOp):
            yield from _functions(op)


def run_pass(pass_: ModulePass, ctx: Context, module: ModuleOp, anchor: Operation) -> bool:
    """Apply one pass, turning any exception into a `PassFailure` located at `anchor`.

    A pass that could invalidate a memory plan is refused before it runs on a
    planned function (`refuse_planned`). Returns whether the pass may have changed
    the IR (False only from a `ReportsChanges` pass that left it alone): the IR
    needs verifying again only then.
    """
    if isinstance(pass_, AnchoredPipelinePass):
        return pass_.apply_and_report(ctx, module)  # locates failures of its inner passes itself
    try:
        refuse_planned(pass_, module)
        if isinstance(pass_, ReportsChanges):
            return pass_.apply_and_report(ctx, module)
        pass_.apply(ctx, module)
        return True
    except Exception as e:
        raise PassFailure(pass_, anchor, e) from e


def run_passes(passes: tuple[ModulePass, ...], ctx: Context, module: ModuleOp, *, verify: bool = True) -> None:
    """Run `passes` on the root `module` in order, each watched by the active instrumentation
    (`instrument.py`), verifying after each pass that may have changed the IR, as mlir-opt does."""
    for pass_ in passes:
        with pass_scope(pass_, module) as scope:
            scope.changed = run_pass(pass_, ctx, module, module)
            if verify and scope.changed:
                with verify_scope(pass_):
                    verify_after(pass_, module)


def verify_after(pass_: ModulePass | None, op: Operation) -> None:
    """Verify `op` (`verify_located`); name `pass_` in a note if it broke the IR."""
    try:
        verify_located(op)
    except OpError as e:
        if pass_ is not None:
            e.note = f"the IR became invalid in pass '{spelled(pass_)}'"
        raise


# The anchored pass ------------------------------------------------------------------


@dataclass(frozen=True)
class AnchoredPipelinePass(ReportsChanges, ModulePass):
    """Runs a nested pipeline on each op named `anchor` directly inside the module."""

    name = "anchored-pipeline"

    anchor: str = FUNC_ANCHOR
    passes: tuple[ModulePass, ...] = ()
    verify_each: bool = field(default=True, compare=False)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        changed = False
        for target in [child for child in _children(op) if child.name == self.anchor]:
            changed |= self._run_nested(ctx, target, self.passes)
        return changed

    def _run_nested(self, ctx: Context, target: Operation, passes: tuple[ModulePass, ...]) -> bool:
        """Run `passes` on `target`, following it if a pass replaces it; whether any changed it."""
        changed = False
        for index, pass_ in enumerate(passes):
            with pass_scope(pass_, target) as scope:
                if isinstance(target, ModuleOp):
                    pass_changed = run_pass(pass_, ctx, target, target)
                    current = [target]
                else:
                    with _isolated(target) as (module, current):
                        scope.ops = current  # filled when the op moves back, even if the pass raised
                        pass_changed = run_pass(pass_, ctx, module, target)
                scope.ops, scope.changed = current, pass_changed
                changed |= pass_changed
                if self.verify_each and pass_changed:
                    with verify_scope(pass_):
                        for op in current:
                            verify_after(pass_, op)
            if len(current) != 1:  # erased, or split into several ops: go on with each
                for op in current:
                    if op.name == self.anchor:
                        changed |= self._run_nested(ctx, op, passes[index + 1 :])
                return changed
            target = current[0]
        return changed

    def __str__(self) -> str:
        return f"{self.anchor}({','.join(map(spelled, self.passes))})"


def _children(op: Operation) -> list[Operation]:
    return [child for region in op.regions for block in region.blocks for child in block.ops]


@contextmanager
def _isolated(op: Operation) -> Iterator[tuple[ModuleOp, list[Operation]]]:
    """Move `op` into a fresh module for the duration of the block, then move
    whatever that module holds (normally `op` or its replacement) back in its place.

    The yielded list is filled with the ops moved back, even when the pass raised,
    so that errors can still print the IR in context.
    """
    block = op.parent_block()
    assert block is not None, "anchored ops always live in a block"
    after = op.next_op
    block.detach_op(op)
    module = ModuleOp([op])
    module.location = op.location
    moved_back: list[Operation] = []
    try:
        yield module, moved_back
    finally:
        for child in list(module.ops):
            module.body.block.detach_op(child)
            if after is not None:
                block.insert_op_before(child, after)
            else:
                block.add_op(child)
            moved_back.append(child)


# Parsing ------------------------------------------------------------------------------


@dataclass
class _Pass:
    spec: str
    pos: int


@dataclass
class _Anchor:
    anchor: str
    elements: list[_Pass | _Anchor]
    pos: int


_NAME = re.compile(r"[A-Za-z0-9_.\-]+")


class _Scanner:
    """Recursive-descent reader of the pipeline grammar (positions kept for errors)."""

    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def error(self, message: str, pos: int | None = None) -> PipelineError:
        return PipelineError(message, self.text, self.pos if pos is None else pos)

    def peek(self) -> str:
        self._skip_spaces()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def _skip_spaces(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def elements(self) -> list[_Pass | _Anchor]:
        """`element (',' element)*`, possibly empty (stops before `)` or the end)."""
        result: list[_Pass | _Anchor] = []
        if self.peek() in ("", ")"):
            return result
        while True:
            result.append(self.element())
            if self.peek() != ",":
                return result
            self.pos += 1

    def element(self) -> _Pass | _Anchor:
        self._skip_spaces()
        start = self.pos
        match = _NAME.match(self.text, self.pos)
        if match is None:
            raise self.error("invalid pass pipeline: expected a pass name")
        name = match.group()
        self.pos = match.end()
        nxt = self.text[self.pos : self.pos + 1]
        if nxt == "(":
            return self._anchor(name, start)
        if name in NESTED_ANCHORS:
            raise self.error(f"invalid pass pipeline: expected '(' after '{name}'")
        if "." in name:
            raise self.error(f"invalid pass pipeline: '{name}' is not a pass name", start)
        if nxt == "{":
            self._skip_group("{", "}")
            options = self.text[match.end() + 1 : self.pos - 1]
            return _Pass(f"{name}{{{_normalize_options(options)}}}", start)
        if nxt == "[":
            self._skip_group("[", "]")
        return _Pass(self.text[start : self.pos], start)

    def _anchor(self, name: str, start: int) -> _Anchor:
        if name not in NESTED_ANCHORS:
            known = ", ".join(f"'{a}'" for a in NESTED_ANCHORS)
            raise self.error(f"invalid pass pipeline: unknown anchor '{name}' (supported: {known})", start)
        self.pos += 1  # '('
        elements = self.elements()
        if self.peek() != ")":
            if self.pos >= len(self.text):
                raise self.error(f"invalid pass pipeline: unbalanced '(': '{name}(' is never closed", start)
            raise self.error("invalid pass pipeline: expected ',' or ')'")
        self.pos += 1
        return _Anchor(name, elements, start)

    def _skip_group(self, open_: str, close: str) -> None:
        """Skip a pass's `{options}` or `[mlir pipeline]`, respecting quoted strings."""
        for index, c in _unquoted(self.text, self.pos):
            if c == close:
                self.pos = index + 1
                return
        raise self.error(f"invalid pass pipeline: unbalanced '{open_}': it is never closed")


def _unquoted(text: str, start: int = 0) -> Iterator[tuple[int, str]]:
    """`(index, char)` of each character of `text[start:]` outside `"..."` strings.

    The one place that knows string syntax (`\\` escapes the next character), so
    that no separator or bracket inside a quoted option value is ever acted on.
    """
    in_string = escaped = False
    for index in range(start, len(text)):
        c = text[index]
        if not in_string:
            if c == '"':
                in_string = True
            else:
                yield index, c
        elif escaped:
            escaped = False
        elif c == "\\":
            escaped = True
        elif c == '"':
            in_string = False


def _split_outside(text: str, separators: str) -> list[str]:
    """Split `text` at the `separators` that are outside strings and brackets."""
    pieces: list[str] = []
    start = depth = 0
    for index, c in _unquoted(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth = max(depth - 1, 0)
        elif depth == 0 and c in separators:
            pieces.append(text[start:index])
            start = index + 1
    pieces.append(text[start:])
    return pieces


def _normalize_options(options: str) -> str:
    """The text between a pass's `{...}` in the form xDSL's option parser accepts.

    Options are split at unquoted spaces, each at its first unquoted `=` into
    key and value, and the value at top-level commas; every piece that xDSL
    would not read as one value (`x=2x128`, `?x4`, `main.f`) is quoted. Keys,
    flags without a value and empty pieces are kept, for xDSL to judge.
    """
    return " ".join(_normalize_option(item) for item in _split_outside(options, string.whitespace) if item)


def _normalize_option(item: str) -> str:
    equals = next((index for index, c in _unquoted(item) if c == "="), None)
    if equals is None:
        return item
    values = _split_outside(item[equals + 1 :], ",")
    return item[: equals + 1] + ",".join(map(quote_value, values))


def _parse(text: str) -> list[_Pass | _Anchor]:
    scanner = _Scanner(text)
    elements = scanner.elements()
    if scanner.peek() == ")":
        raise scanner.error("invalid pass pipeline: unbalanced ')'")
    if scanner.peek():
        raise scanner.error("invalid pass pipeline: expected ','")
    return elements


# Building ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Pipeline:
    """The passes to run on the root module, in order (anchored groups included)."""

    passes: tuple[ModulePass, ...] = ()

    def __str__(self) -> str:
        """The canonical `--pass-pipeline` spelling."""
        return f"{ROOT_ANCHOR}({','.join(map(spelled, self.passes))})"


def parse_pipeline(
    text: str,
    available: PassRegistry,
    *,
    require_root: bool = False,
    verify_each: bool = True,
) -> Pipeline:
    """Build a pipeline from `text`.

    `text` is either `builtin.module(...)` or (unless `require_root`, which is how
    `--pass-pipeline` behaves) the body of that anchor.
    """
    elements = _parse(text)
    if len(elements) == 1 and isinstance(elements[0], _Anchor) and elements[0].anchor == ROOT_ANCHOR:
        elements = elements[0].elements
    elif require_root and elements:
        raise PipelineError(f"invalid pass pipeline: expected '{ROOT_ANCHOR}(...)' around the passes", text, 0)
    return Pipeline(_build(elements, ROOT_ANCHOR, text, available, verify_each))


def _build(
    elements: list[_Pass | _Anchor], parent: str, text: str, available: PassRegistry, verify_each: bool
) -> tuple[ModulePass, ...]:
    passes: list[ModulePass] = []
    for element in elements:
        if isinstance(element, _Pass):
            passes.append(_instantiate(element, text, available))
            continue
        if element.anchor not in NESTED_ANCHORS[parent]:
            raise PipelineError(
                f"invalid pass pipeline: '{element.anchor}' cannot be nested in '{parent}'", text, element.pos
            )
        inner = _build(element.elements, element.anchor, text, available, verify_each)
        passes.append(AnchoredPipelinePass(element.anchor, inner, verify_each))
    return tuple(passes)


def _instantiate(element: _Pass, text: str, available: PassRegistry) -> ModulePass:
    try:
        spec = parse_spec(element.spec)
    except ArgSpecParseError as e:  # a BaseException in xDSL
        detail = str(e).splitlines()[-1].strip() if str(e) else "malformed pass options"
        raise PipelineError(f"invalid pass pipeline: {detail}", text, element.pos) from None
    if spec.name not in available:
        raise PipelineError(
            f"unknown pass '{spec.name}'{did_you_mean(spec.name, available)} "
            "(run with --list-passes to see the available passes)",
            text,
            element.pos,
        )
    try:
        pass_class = available[spec.name]()
    except Exception as e:
        raise PipelineError(f"pass '{spec.name}' could not be loaded: {e}", text, element.pos) from e
    try:
        check_options(pass_class, spec)
        return pass_class.from_spec(spec)
    except OptionError as e:
        raise PipelineError(f"invalid options for pass '{spec.name}': {e}", text, element.pos) from None
    except (ValueError, TypeError) as e:
        raise PipelineError(f"invalid options for pass '{spec.name}': {e}", text, element.pos) from e
