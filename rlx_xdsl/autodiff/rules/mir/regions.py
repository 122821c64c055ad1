"""VJP rules of the region group: none, `rlx-prepare-ad` removes the regions.

`mir.if` becomes both branches and `mir.where` (`inline-if`), a bounded
`mir.while` is unrolled (`unroll-while`); the ops inside are then differentiated
by their own rules, as in RLX.
"""

from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp

PENDING = {
    IfOp: "issue 10 (rlx-lower-control-flow, for the inline-if step)",
    WhileOp: "issue 10 (rlx-lower-control-flow, for the unroll-while step)",
}
"""Ops that have neither a rule nor a rewrite yet, and the issue that adds them."""
