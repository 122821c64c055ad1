"""The `.mlir` files this repository ships, for tests that run over all of them.

Only checked-in inputs: lit writes scratch copies under `lit_tests/**/Output/`, and a test
collected over those would change with whether `lit` ran before `pytest`.
"""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def lit_inputs() -> list[Path]:
    """Every `.mlir` file under `lit_tests/`, lit's `Output/` scratch folders excluded."""
    return sorted(
        p
        for p in (REPO / "lit_tests").rglob("*.mlir")
        if "Output" not in p.relative_to(REPO).parts
    )


def examples() -> list[Path]:
    """The shipped examples (`examples/*.mlir`)."""
    return sorted((REPO / "examples").glob("*.mlir"))
