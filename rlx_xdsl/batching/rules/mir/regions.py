"""Batching rules of `mir.if` and `mir.while`.

A batched predicate or loop condition differs per example, so the op is mapped over the
batch (`mir.scan` running the per-example `mir.if`/`mir.while`): each example takes its
own branch and its own number of iterations, exactly as unbatched. `mir.yield` is batched
with its parent.
"""

from rlx_xdsl.batching.emit import map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES, NoBatchRule
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp

BATCH_RULES.add(IfOp, map_over_batch)
BATCH_RULES.add(WhileOp, map_over_batch)
BATCH_RULES.add(YieldOp, NoBatchRule("a region terminator is batched with its parent op"))
