"""Recipes of the HIR block ops, one module per HIR group (`layers.HIR_GROUPS`),
loaded by the generator (`layers.load("hir-graphgen")`).

They join `graphgen.RECIPES` like MIR's; `graphs(ops=...)` draws HIR blocks
when given their classes (the default draw stays MIR-only). A block's
operands share one float dtype: activations come from the pool, weights are
usually new parameters of that dtype.
"""
