"""`--mlir-pass-statistics`: each pass's counters (`transforms/statistics.py`), in mlir-opt's report.

`pipeline` display follows the pipeline's nesting and lists every pass; `list`
sums the counters of passes of one name and lists, sorted by name, the passes
that have counters. A pass that ran on several functions reports its totals.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from xdsl.ir import Operation
from xdsl.passes import ModulePass

from rlx_xdsl.transforms.instrument import PassInstrumentation
from rlx_xdsl.transforms.pipeline import AnchoredPipelinePass
from rlx_xdsl.transforms.statistics import Statistic, collecting, declared

RULE = "===" + "-" * 73 + "==="
TITLE = "... Pass statistics report ..."


@dataclass
class PassStatistics(PassInstrumentation):
    """Collects each pass's counters while it runs, summed over every op it runs on."""

    display: str = "pipeline"
    totals: dict[int, Counter[Statistic]] = field(default_factory=dict[int, Counter[Statistic]])
    _running: list[tuple[AbstractContextManager[Counter[Statistic]], Counter[Statistic]]] = field(
        default_factory=list[tuple[AbstractContextManager[Counter[Statistic]], Counter[Statistic]]]
    )

    def before_pass(self, pass_: ModulePass, op: Operation) -> None:
        if not isinstance(pass_, AnchoredPipelinePass):
            scope = collecting()
            self._running.append((scope, scope.__enter__()))

    def after_pass(self, pass_: ModulePass, ops: Sequence[Operation], changed: bool) -> None:
        self._finish(pass_)

    def after_pass_failed(self, pass_: ModulePass, ops: Sequence[Operation], error: BaseException) -> None:
        self._finish(pass_)

    def _finish(self, pass_: ModulePass) -> None:
        if isinstance(pass_, AnchoredPipelinePass):
            return
        scope, counts = self._running.pop()
        scope.__exit__(None, None, None)
        self.totals.setdefault(id(pass_), Counter()).update(counts)

    # The report -----------------------------------------------------------------------------

    def report(self, passes: Sequence[ModulePass]) -> str:
        lines = [RULE, " " * ((80 - len(TITLE)) // 2) + TITLE, RULE]
        if self.display == "list":
            merged: dict[str, dict[Statistic, int]] = {}
            for pass_ in _leaves(passes):
                stats = self._values(pass_)
                if stats:
                    into = merged.setdefault(pass_.name, dict.fromkeys(stats, 0))
                    for stat, value in stats.items():
                        into[stat] = into.get(stat, 0) + value
            for name in sorted(merged):
                lines.extend(_entry(2, name, merged[name]))
        else:
            lines.extend(self._pipeline(passes, 0))
        return "\n".join(lines) + "\n\n"

    def _pipeline(self, passes: Sequence[ModulePass], indent: int) -> Iterator[str]:
        for pass_ in passes:
            if isinstance(pass_, AnchoredPipelinePass):
                yield from _entry(indent, f"'{pass_.anchor}' Pipeline", {})
                yield from self._pipeline(pass_.passes, indent + 2)
            else:
                yield from _entry(indent, pass_.name, self._values(pass_))

    def _values(self, pass_: ModulePass) -> dict[Statistic, int]:
        """The declared counters (0 if never counted), then any other it counted."""
        counts = self.totals.get(id(pass_), Counter())
        values = {stat: counts[stat] for stat in declared(pass_)}
        values.update({stat: value for stat, value in counts.items() if stat not in values})
        return values


def _leaves(passes: Sequence[ModulePass]) -> Iterator[ModulePass]:
    for pass_ in passes:
        if isinstance(pass_, AnchoredPipelinePass):
            yield from _leaves(pass_.passes)
        else:
            yield pass_


def _entry(indent: int, name: str, stats: dict[Statistic, int]) -> Iterator[str]:
    """A pass's line, then its counters sorted by name: `(S) VALUE NAME - DESCRIPTION`."""
    yield " " * indent + name
    if not stats:
        return
    name_width = max(len(stat.name) for stat in stats)
    value_width = max(len(str(value)) for value in stats.values())
    for stat in sorted(stats, key=lambda s: s.name):
        value = stats[stat]
        yield f"{' ' * (indent + 2)}(S) {value:>{value_width}} {stat.name:<{name_width}} - {stat.description}"
