"""Execution backends other than the numpy interpreter (IREE)."""
