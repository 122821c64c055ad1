"""numpy semantics of MIR norm ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
