"""Building graphs in Python: `Emitter` (creating ops at an insertion point with inferred
types and locations, dialect namespaces `e.mir`, `e.hir`), `GraphBuilder` (an emitter on
a new function's block: the Python builder API) and builders for scans and custom
functions with bodies written as Python functions (`structured_builder`).

May import: the dialects, `ir`, and the root modules. Never passes, interpreters or tools.
"""
