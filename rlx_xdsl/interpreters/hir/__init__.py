"""Kernels of the HIR block ops, one module per dialect group (as `dialects.hir.GROUPS`).

Every block runs its `fusable` lowering (`lowered.run_lowered`): HIR means
what it lowers to, and the tests check each block against a separate formula.
"""

from rlx_xdsl.interpreters.hir import attention, blocks, conv, linear, moe, norm

GROUPS = (linear, norm, attention, conv, blocks, moe)
