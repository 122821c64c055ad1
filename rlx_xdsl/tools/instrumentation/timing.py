"""`--mlir-timing`: user and wall time of parsing, verifying, each pass and output, in
mlir-opt's report.

Timers nest as the pipeline nests: an anchored group is a `'func.func' Pipeline`
timer holding its passes, each summed over every function it ran on. Verifying
the input and what each pass left is timed as `Verifier` (beside the passes, as
MLIR's old `VerifierPass`), not as part of the pass. The
report's `tree` display keeps that nesting; `list` sums timers of the same name
and sorts them by time, as MLIR's `--mlir-timing-display=list` does.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field

from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_xdsl.transforms.instrument import PassInstrumentation
from rlx_xdsl.transforms.pipeline import AnchoredPipelinePass

RULE = "===" + "-" * 73 + "==="
TITLE = "... Execution time report ..."


@dataclass
class Timer:
    """A named span of work: the sum of every time it ran, and the timers run inside it."""

    name: str
    wall: float = 0.0
    user: float = 0.0
    children: dict[str, Timer] = field(default_factory=dict[str, "Timer"])

    def child(self, name: str) -> Timer:
        if name not in self.children:
            self.children[name] = Timer(name)
        return self.children[name]


@dataclass
class Timing(PassInstrumentation):
    """Times what runs inside `phase(...)` blocks and every pass, nested as they run."""

    display: str = "tree"
    root: Timer = field(default_factory=lambda: Timer("root"))
    _stack: list[tuple[Timer, float, float]] = field(default_factory=list[tuple[Timer, float, float]])

    def __post_init__(self) -> None:
        self._start = (time.perf_counter(), time.process_time())
        self._paused = self.root

    def _push(self, name: str) -> None:
        parent = self._stack[-1][0] if self._stack else self.root
        self._stack.append((parent.child(name), time.perf_counter(), time.process_time()))

    def _pop(self) -> None:
        timer, wall, user = self._stack.pop()
        timer.wall += time.perf_counter() - wall
        timer.user += time.process_time() - user

    @contextmanager
    def phase(self, name: str) -> Iterator[None]:
        """Time the block as `name` (`Parser`, `Output`)."""
        self._push(name)
        try:
            yield
        finally:
            self._pop()

    def before_pass(self, pass_: ModulePass, op: Operation) -> None:
        self._push(f"'{pass_.anchor}' Pipeline" if isinstance(pass_, AnchoredPipelinePass) else pass_.name)

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        self._pop()

    def after_pass_failed(self, pass_: ModulePass, ops: Sequence[Operation], error: BaseException) -> None:
        self._pop()

    def before_verify(self, pass_: ModulePass) -> None:
        """Pause the pass's timer: verification is timed beside it, as `Verifier`."""
        timer, wall, user = self._stack.pop()
        timer.wall += time.perf_counter() - wall
        timer.user += time.process_time() - user
        self._push("Verifier")
        self._paused = timer

    def after_verify(self, pass_: ModulePass) -> None:
        self._pop()
        self._stack.append((self._paused, time.perf_counter(), time.process_time()))

    # The report -----------------------------------------------------------------------------

    def report(self) -> str:
        """The report, as MLIR prints it; the root's time is the run's so far."""
        self.root.wall = time.perf_counter() - self._start[0]
        self.root.user = time.process_time() - self._start[1]
        total = self.root
        lines = [RULE, " " * ((80 - len(TITLE)) // 2) + TITLE, RULE]
        lines.append(f"  Total Execution Time: {total.wall:.4f} seconds")
        lines.append("")
        lines.append("  ----User Time----  ----Wall Time----  ----Name----")
        if self.display == "list":
            rows = [(0, t) for t in sorted(_merged(total), key=lambda t: -t.wall)]
        else:
            rows = list(_tree(total.children.values(), 0))
        rows.append((0, _rest(total)))
        rows.append((0, Timer("Total", total.wall, total.user)))
        lines.extend(_row(timer, depth, total) for depth, timer in rows)
        return "\n".join(lines) + "\n"


def _tree(timers: Sequence[Timer] | Iterator[Timer], depth: int) -> Iterator[tuple[int, Timer]]:
    for timer in timers:
        yield depth, timer
        yield from _tree(timer.children.values(), depth + 1)


def _merged(root: Timer) -> list[Timer]:
    """Every timer (the root included, as MLIR lists it), those of one name summed."""
    merged: dict[str, Timer] = {}
    for _, timer in _tree([root], 0):
        into = merged.setdefault(timer.name, Timer(timer.name))
        into.wall += timer.wall
        into.user += timer.user
    return list(merged.values())


def _rest(total: Timer) -> Timer:
    """What no top-level timer accounts for (start-up, reporting)."""
    wall = total.wall - sum(t.wall for t in total.children.values())
    user = total.user - sum(t.user for t in total.children.values())
    return Timer("Rest", max(wall, 0.0), max(user, 0.0))


def _row(timer: Timer, depth: int, total: Timer) -> str:
    return f"{_column(timer.user, total.user)}{_column(timer.wall, total.wall)}  {'  ' * depth}{timer.name}"


def _column(value: float, total: float) -> str:
    percent = 100.0 * value / total if total > 0 else 0.0
    return f"{value:10.4f} ({percent:5.1f}%)"
