"""Passes that move a graph from one level to another (HIR -> MIR, MIR -> LIR, MIR -> linalg).

Each conversion is a package of its own (`hir_to_mir/`, `mir_to_lir/`,
`mir_to_linalg/`) whose per-op rewrites are registered by op class next to the
op group they convert; the passes are registered in `rlx_xdsl.transforms`.
"""
