"""Support every layer shares and that knows nothing of the IR: compile-time memos
(`memo`: parsed and printed types, inferred result types; `without_memos()`) and progress of
long work on a terminal's stderr (`progress`: IREE compiles, PyTorch imports; the optional
`rich`).

May import: the standard library, and optional libraries inside the functions that use them.
"""
