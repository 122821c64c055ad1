"""Kernels of the HIR block ops, one module per HIR group (`layers.HIR_GROUPS`).

Every block runs its `fusable` lowering (`lowered.run_lowered`): HIR means
what it lowers to, and the tests check each block against a separate formula.
The interpreter loads the group modules (`layers.load("hir-kernels")`).
"""
