"""numpy implementations of MIR ops, one module per dialect group.

Each module is named like its group in `dialects.mir` and exports `FUNCTIONS`;
`rlx_xdsl.interpreters` finds it by that name.
"""
