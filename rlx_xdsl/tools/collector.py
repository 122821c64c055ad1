"""The garbage collector's pace during one tool run.

A compiler run builds a large IR that lives until the end, so CPython's default
pace (a young collection every 700 allocations, full collections as the heap grows)
scans the same live ops over and over: about 10% of an `rlx-opt` pipeline on a
128-layer graph. During a run the tools freeze what start-up allocated (modules,
classes: never garbage) and collect the young generation every `YOUNG` allocations;
cycles still get collected, so memory stays bounded by the live IR plus at most
`YOUNG` young objects. The previous settings come back when the run ends (the tools
also run in-process, e.g. in tests).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

YOUNG = 50_000
"""Allocations between two collections of the youngest generation (CPython: 700)."""

OLDER = 20
"""Collections of a generation between two of the next one (CPython: 10)."""


@contextmanager
def tool_run_pace() -> Iterator[None]:
    """Collect garbage at a compiler's pace for the duration of the block."""
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(YOUNG, OLDER, OLDER)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()
