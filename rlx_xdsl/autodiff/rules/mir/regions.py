"""VJP rules of the region group: none, `rlx-prepare-ad` removes the regions.

`mir.if` becomes both branches and `mir.where` (`inline-if`), a bounded
`mir.while` is unrolled (`unroll-while`); the ops inside are then differentiated
by their own rules, as in RLX.
"""
