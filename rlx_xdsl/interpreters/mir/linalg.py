"""numpy semantics of MIR linalg ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
