"""numpy semantics of MIR conv ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
