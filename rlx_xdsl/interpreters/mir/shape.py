"""numpy semantics of MIR shape ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
