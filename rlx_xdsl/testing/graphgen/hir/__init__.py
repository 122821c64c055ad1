"""Recipes of the HIR block ops, one module per dialect group (as `dialects.hir.GROUPS`).

They join `graphgen.RECIPES` like MIR's; `graphs(ops=...)` draws HIR blocks
when given their classes (the default draw stays MIR-only). A block's
operands share one float dtype: activations come from the pool, weights are
usually new parameters of that dtype.
"""

from rlx_xdsl.testing.graphgen.hir import attention, blocks, conv, linear, moe, norm

GROUPS = (linear, norm, attention, conv, blocks, moe)
