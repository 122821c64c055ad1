"""numpy semantics of MIR control_flow ops (placeholder: filled in by its own change)."""

FUNCTIONS: list[type] = []
