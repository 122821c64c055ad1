"""numpy semantics of MIR indexing ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
