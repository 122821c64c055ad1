"""The text IR and its checks: reading, printing, locating and verifying MLIR text.

Lexer and parser (`lexer`, `parser`, exact numeric `literals`, `dense` attributes),
printer, source positions (`locations`) and the one decode → parse → verify → locate flow
of every tool (`source`), located diagnostics (`diagnostics`), SSA dominance
(`dominance`), "did you mean" (`suggest`), the emitter that creates ops (`emitter`), and the
conventions graphs follow in the IR: argument names and parameters (`graph`), device
meshes and shardings (`sharding`).

May import: the root modules below the dialects (`dtypes`, `numerics`, `shapes`,
`registry`) and xDSL. Never the dialects, passes, interpreters or tools.
"""
