"""Pass statistics: named counters that passes declare and their patterns increment.

As MLIR's `Pass::Statistic`: a pass lists the counters it reports,

    DEAD_OPS = Statistic("num-erased", "Number of dead ops erased")

    class DeadCodeEliminationPass(ModulePass):
        name = "rlx-dce"
        STATISTICS = (DEAD_OPS,)

and the code doing the work bumps them: `DEAD_OPS.add()`. Patterns applied
through `counted(pattern)` (which `apply_patterns` uses) count each rewrite they
make under the pattern's class name (`pattern_statistic(FuseSwiglu)`), so a pattern
pass reports how often each of its patterns fired with no code of its own.

Counters are collected only while `rlx-opt --mlir-pass-statistics` runs the pass
(`collecting`); otherwise `add` is one context-variable read.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from xdsl.ir import Operation
from xdsl.pattern_rewriter import GreedyRewritePatternApplier, PatternRewriter, RewritePattern

_COUNTS: ContextVar[Counter[Statistic] | None] = ContextVar("rlx_pass_statistics", default=None)


@dataclass(frozen=True)
class Statistic:
    """One named counter of a pass, with the description the report prints beside it."""

    name: str
    description: str

    def add(self, amount: int = 1) -> None:
        """Count `amount` more (nothing happens unless statistics are being collected)."""
        counts = _COUNTS.get()
        if counts is not None:
            counts[self] += amount


@contextmanager
def collecting() -> Iterator[Counter[Statistic]]:
    """Collect the counts of everything run inside the block (a pass) into the yielded counter."""
    counts: Counter[Statistic] = Counter()
    token = _COUNTS.set(counts)
    try:
        yield counts
    finally:
        _COUNTS.reset(token)


def declared(pass_: object) -> tuple[Statistic, ...]:
    """The counters `pass_` declares (its `STATISTICS`)."""
    return getattr(pass_, "STATISTICS", ())


def pattern_statistic(pattern: type[RewritePattern]) -> Statistic:
    """The counter `counted` keeps for a pattern class: its rewrites, under its name."""
    return Statistic(pattern.__name__, f"Number of rewrites by the {pattern.__name__} pattern")


@dataclass(frozen=True)
class CountedPattern(RewritePattern):
    """`pattern`, counting each rewrite it makes under its own name."""

    pattern: RewritePattern

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        done = rewriter.has_done_action
        self.pattern.match_and_rewrite(op, rewriter)
        if rewriter.has_done_action and not done:
            pattern_statistic(type(self.pattern)).add()


def counted(pattern: RewritePattern) -> RewritePattern:
    """`pattern` counting its rewrites while statistics are collected (each one of a greedy
    applier's patterns separately); `pattern` itself otherwise, at no cost."""
    if _COUNTS.get() is None:
        return pattern
    if isinstance(pattern, GreedyRewritePatternApplier):
        return dataclasses.replace(pattern, rewrite_patterns=[counted(p) for p in pattern.rewrite_patterns])
    return CountedPattern(pattern)
