"""MIR attention ops (placeholder: filled in by its own change)."""

OPS: list[type] = []
ATTRIBUTES: list[type] = []
