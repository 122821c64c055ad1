"""numpy semantics of MIR attention ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
