"""Applying rewrite patterns: the one place where passes build xDSL's walker.

A pass changes only what it is for. xDSL's `GreedyRewritePatternApplier` erases
every op it visits that is trivially dead before trying the patterns (its
`dce_enabled`, on by default as in MLIR's greedy driver), so a pass built on it
deletes dead ops it has nothing to do with, and running it a second time, after
its own rewrites left more dead ops, changes the IR again. Here that erasure is
off unless a pass asks for it: removing dead code is `rlx-dce`'s job, and
`rlx-canonicalize` (MLIR's canonicalize also erases dead ops) the one pass that
opts in. `tests/transforms/test_idempotence.py` checks that every pass is
idempotent and that no other module builds a walker of its own.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.pattern_rewriter import (
    GreedyRewritePatternApplier,
    PatternRewriteWalker,
    RewritePattern,
)

from rlx_xdsl.transforms.statistics import counted


def apply_patterns(
    module: ModuleOp,
    *patterns: RewritePattern,
    recursive: bool = False,
    reverse: bool = False,
    erase_dead: bool = False,
) -> bool:
    """Apply `patterns` (the first that matches an op wins) over `module`; True if anything changed.

    `recursive` also visits the ops the rewrites create and re-walks until nothing
    changes, for passes whose rewrites create new matches; otherwise one sweep
    suffices. `reverse` visits ops last to first. `erase_dead` lets the walk
    erase every dead op it meets (only for passes whose job includes that).
    Under `--mlir-pass-statistics` each pattern counts its rewrites (`counted`).
    """
    if len(patterns) == 1 and not erase_dead:
        pattern = patterns[0]
    else:
        pattern = GreedyRewritePatternApplier(list(patterns), dce_enabled=erase_dead)
    walker = PatternRewriteWalker(counted(pattern), apply_recursively=recursive, walk_reverse=reverse)
    return walker.rewrite_module(module)
