"""Run a tool with room for deeply nested IR.

xDSL parses, prints, walks and interprets nested regions recursively, about 20 to
40 Python frames per level, so Python's default limit of 1,000 frames stops at 30
or so nested `mir.if`s. The tools therefore run their work in a thread with a
large C stack and a recursion limit sized for `MAX_NESTING` levels of nesting;
deeper input still fails cleanly with a `RecursionError` (reported as a located
"nested too deeply" error), never by overflowing the C stack.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

MAX_NESTING = 1000
"""Levels of region nesting the tools handle (valid IR this deep parses, verifies, runs, prints)."""

FRAMES_PER_LEVEL = 40
"""Python frames one level of nesting may take, with margin (measured: about 15)."""

STACK_BYTES = 1 << 30
"""The worker thread's C stack: address space reserved, touched only as deep as used."""


def run_deep(work: Callable[[], T]) -> T:
    """`work()` in a thread with a large stack and recursion limit; its result or exception."""
    outcome: list = []

    def target() -> None:
        sys.setrecursionlimit(max(sys.getrecursionlimit(), MAX_NESTING * FRAMES_PER_LEVEL))
        try:
            outcome.append((True, work()))
        except BaseException as e:  # handed to the calling thread as is
            outcome.append((False, e))

    previous = threading.stack_size()
    try:
        threading.stack_size(STACK_BYTES)
        worker = threading.Thread(target=target, name="rlx-tool", daemon=True)
        worker.start()
    except (ValueError, RuntimeError, MemoryError):  # no room for the big stack: run here
        return work()
    finally:
        threading.stack_size(previous)
    while worker.is_alive():
        worker.join(0.1)  # a short timeout keeps Ctrl-C deliverable to this thread
    ok, value = outcome[0]
    if ok:
        return value
    raise value
