"""Located diagnostics: what went wrong, where in the source, and on which op.

A pass raises an `OpError` to point at the offending op. Every user-facing
failure of the tools (parse error, verifier error, pass failure) becomes one
`Diagnostic` and is printed MLIR-style:

    f.mlir:3:8: error: 'mir.add' shapes [2, 3], [4] do not broadcast
      %0 = mir.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
           ^
    f.mlir:3:8: note: see current operation: %0 = "mir.add"(%a, %b) : ...

`verify_located` replaces `module.verify()`: xDSL's verifier stops at the first
failure but does not say which op failed, so we verify ops one at a time,
innermost first, and raise an `OpError` carrying the failing op.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from io import StringIO

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, Region
from xdsl.traits import NoTerminator
from xdsl.utils.exceptions import (
    DiagnosticException,
    MultipleSpansParseError,
    ParseError,
    VerifyException,
)

from rlx_xdsl.ir.dominance import first_non_dominated_use, postorder
from rlx_xdsl.ir.locations import LineIndex, SourcePos, block_labels, op_position
from rlx_xdsl.ir.printer import RlxPrinter


class OpError(DiagnosticException):
    """A diagnostic about one op; passes raise it to point at the offending op."""

    def __init__(self, op: Operation, message: str, note: str | None = None):
        super().__init__(message)
        self.op = op
        self.message = message
        self.note = note


@dataclass
class Diagnostic:
    """One message at a source position.

    `op` and `notes` are context for people reading the report; they are left out
    under `--verify-diagnostics`, where only the message itself is matched.
    """

    message: str
    pos: SourcePos | None
    severity: str = "error"
    op: Operation | None = None
    notes: list[Diagnostic] = field(default_factory=list["Diagnostic"])


# Building diagnostics from failures --------------------------------------------


def describe(error: BaseException) -> str:
    """The user-facing text of an exception.

    Diagnostics (`VerifyException`, `PassFailedException`, ...) are messages meant
    for users and are shown verbatim; anything else is a bug somewhere, so its type
    is kept to make the report actionable.
    """
    if isinstance(error, OpError):
        return error.message
    if isinstance(error, DiagnosticException) and error.args:
        return str(error.args[0])
    text = str(error)
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


def parse_error_diagnostic(error: ParseError, lines: LineIndex) -> Diagnostic:
    """A parse error at the offending token (span offsets index the parsed text, whose
    lines `lines` maps to file lines)."""
    diag = Diagnostic(error.msg, _span_pos(error.span.start, lines))
    if isinstance(error, MultipleSpansParseError):
        for span, note in error.refs:
            diag.notes.append(Diagnostic(note or error.ref_text or "see here", _span_pos(span.start, lines), "note"))
    return diag


def _span_pos(offset: int, lines: LineIndex) -> SourcePos:
    line, col = lines.line_col(offset)
    return SourcePos(lines.name, line, col)


def op_diagnostic(op: Operation, message: str, note: str | None = None) -> Diagnostic:
    """An error located at `op` that also shows `op` (MLIR's "see current operation"),
    and the HIR block(s) `op` was lowered from."""
    diag = Diagnostic(message, op_position(op), op=op)
    if note is not None:
        diag.notes.append(Diagnostic(note, diag.pos, "note"))
    labels = block_labels(op.location)
    if labels:
        blocks = ", ".join(f"'{label}'" for label in labels)
        diag.notes.append(Diagnostic(f"lowered from HIR block{'s' if len(labels) > 1 else ''} {blocks}", diag.pos, "note"))
    return diag


# Notes: what a pass tells the user without failing --------------------------------

_NOTES: ContextVar[list[Diagnostic] | None] = ContextVar("rlx_notes", default=None)


def note(op: Operation, message: str) -> None:
    """Tell the user something about `op` without failing (`FILE:LINE:COL: note: ...` on
    rlx-opt's stderr, e.g. a pass that found nothing to do); kept only while a tool
    collects notes (`collecting_notes`), else dropped."""
    notes = _NOTES.get()
    if notes is not None:
        notes.append(Diagnostic(message, op_position(op), "note"))


@contextmanager
def collecting_notes() -> Iterator[list[Diagnostic]]:
    """Collect the notes emitted inside the block into the yielded list."""
    notes: list[Diagnostic] = []
    token = _NOTES.set(notes)
    try:
        yield notes
    finally:
        _NOTES.reset(token)


# Verification that knows which op failed ------------------------------------------


MODULE_VERIFIERS: list[Callable[[ModuleOp], None]] = []
"""Checks of module and function attributes that no op verifies (the device mesh and
argument shardings), each registered by the module that defines those attributes; each
raises `OpError` at the op that carries a bad attribute."""


def verify_located(root: Operation) -> None:
    """Verify `root` and everything nested in it; raise `OpError` at the innermost failing op.

    Checks the same rules as `Operation.verify()` (structure, traits, IRDL
    constraints and `verify_`), nested ops before their parent as xDSL does, then
    SSA dominance, which xDSL does not check (`dominance.py`), and a module's attributes
    that no op verifies (`MODULE_VERIFIERS`: a device mesh and shardings, `sharding.py`). Crashing verifiers
    are reported as errors at their op too. Iterative, so nesting depth costs nothing.
    """
    for op in postorder(root):
        _verify_one(op)
    bad = first_non_dominated_use(root)
    if bad is not None:
        owner = bad.value.owner
        defining = owner if isinstance(owner, Operation) else owner.parent_op()
        where = op_position(defining) if defining is not None else None
        note = f"operand #{bad.index} is defined at {where}" if where is not None else None
        raise OpError(bad.user, f"operand #{bad.index} does not dominate this use", note)
    if isinstance(root, ModuleOp):
        for verify in MODULE_VERIFIERS:
            verify(root)


def _verify_one(op: Operation) -> None:
    """Verify `op` itself (its nested ops were verified before)."""
    for region in op.regions:
        if len(region.blocks) == 1 and region.blocks.first.first_op is None and not op.has_trait(NoTerminator):
            raise OpError(
                op,
                f"Operation {op.name} contains empty block in single-block region "
                "that expects at least a terminator",
            )
    try:
        op.verify(verify_nested_ops=False)
    except OpError:
        raise  # the verifier knows a better place (a memory plan points at the overlapping value)
    except VerifyException as e:
        raise OpError(op, describe(e)) from e
    except Exception as e:
        raise OpError(op, f"internal error in the verifier of '{op.name}': {describe(e)}") from e


# Rendering ----------------------------------------------------------------------


def render(diag: Diagnostic, source: LineIndex | None, with_context: bool = True) -> str:
    """MLIR-style text: `FILE:LINE:COL: severity: message` and the source line with a
    caret, then (`with_context`) the notes and the op the diagnostic is about."""
    parts = [_render_one(diag, source)]
    if with_context:
        # A note at the error's own position would only repeat its source excerpt.
        parts.extend(_render_one(note, source if note.pos != diag.pos else None) for note in diag.notes)
        if diag.op is not None:
            parts.append(f"{_pos_prefix(diag.pos)}note: see current operation: {format_op(diag.op)}\n")
    return "".join(parts)


def _pos_prefix(pos: SourcePos | None) -> str:
    return f"{pos}: " if pos is not None else "<unknown>:0:0: "


def _render_one(diag: Diagnostic, source: LineIndex | None) -> str:
    text = f"{_pos_prefix(diag.pos)}{diag.severity}: {diag.message}\n"
    return text + source_excerpt(diag.pos, source)


def source_excerpt(pos: SourcePos | None, source: LineIndex | None) -> str:
    """The source line at `pos` and a caret under its column (empty if unavailable)."""
    if pos is None or source is None or pos.file != source.name:
        return ""
    line = source.line_text(pos.line)
    if line is None:
        return ""
    # Keep tabs so the caret lines up with what the terminal shows.
    indent = "".join(c if c == "\t" else " " for c in line[: max(pos.col - 1, 0)])
    return f"{line}\n{indent}^\n"


def format_op(op: Operation) -> str:
    """`op` in generic form, with SSA names as they appear in the whole module, and its
    regions elided as `{...}` (MLIR's `OpPrintingFlags::skipRegions`): a pass that fails
    on a function or the module shows that op, not all of its body (which
    `--mlir-print-ir-after-failure` prints)."""
    printer = _CurrentOpPrinter(stream=StringIO(), print_generic_format=True)
    try:
        toplevel = op.get_toplevel_object()
        if isinstance(toplevel, Operation) and toplevel is not op:
            printer.print_op(toplevel)  # assign value names in context, output discarded
        printer.stream = StringIO()
        printer.skip_regions = True
        printer.print_op(op)
        return printer.stream.getvalue()
    except Exception as e:  # a broken op must not hide the diagnostic itself
        return f"<'{op.name}' cannot be printed: {describe(e)}>"


class _CurrentOpPrinter(RlxPrinter):
    """`RlxPrinter` that prints regions as `{...}` once `skip_regions` is set."""

    skip_regions = False

    def print_regions(self, regions: Sequence[Region]) -> None:
        if self.skip_regions and regions:
            self.print_string(f" ({', '.join('{...}' for _ in regions)})")
        else:
            super().print_regions(regions)
