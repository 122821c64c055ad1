"""The compile-time memos, and the switch that turns them all off.

Graphs repeat themselves: every layer of a model spells the same `tensor<…>` types
and its ops infer the same result types. The tools therefore remember

* parsed types by their spelling, for one parse (`parser.RlxParser`);
* printed types by value, for one printer (`printer.RlxPrinter`);
* tensor types built by inference, by element type and shape (`shapes.tensor`);
* inferred result types, and which ops verified, by everything inference reads
  (`dialects.base.RlxOperation`).

Attributes are immutable, so a remembered one is as good as a new one; the output is
the same with and without the memos (`without_memos()` is how the tests show it). The
process-wide memos are `BoundedMemo`s: they forget everything when full, so memory
stays bounded however many graphs a process compiles.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from contextlib import contextmanager
from typing import Generic, TypeVar

V = TypeVar("V")

_enabled = True


def enabled() -> bool:
    """Whether the memos are on (they are, unless inside `without_memos()`)."""
    return _enabled


@contextmanager
def without_memos() -> Iterator[None]:
    """Turn every memo off (and empty the process-wide ones) for the duration of the block."""
    global _enabled
    previous, _enabled = _enabled, False
    BoundedMemo.clear_all()
    try:
        yield
    finally:
        _enabled = previous


class BoundedMemo(Generic[V]):
    """A dictionary that empties itself when it reaches `limit` entries.

    A key that cannot be hashed (an attribute holding a dict) is never remembered.
    """

    _instances: list[BoundedMemo] = []

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.entries: dict[Hashable, V] = {}
        BoundedMemo._instances.append(self)

    def get(self, key: Hashable) -> V | None:
        try:
            return self.entries.get(key)
        except TypeError:
            return None

    def put(self, key: Hashable, value: V) -> V:
        if len(self.entries) >= self.limit:
            self.entries.clear()
        try:
            self.entries[key] = value
        except TypeError:
            pass
        return value

    @classmethod
    def clear_all(cls) -> None:
        for memo in cls._instances:
            memo.entries.clear()
