"""Packing buffers into one arena: offsets for byte ranges that live over step ranges.

A pure algorithm (no IR): each `Request` is a block of `size` bytes live over the
steps `[birth, death]`; two requests whose live ranges overlap (bounds included)
must get disjoint byte ranges. Sizes are already rounded up to the alignment, so
every offset built from them is aligned too.

A strategy is a visiting order and a choice of gap. `first_fit` and `best_fit`
visit the requests by decreasing size, as RLX's planner does (ties in schedule
order), and give each the lowest or the tightest gap left free by the already
placed requests that overlap it in time; `longest_first` visits the longest-lived
requests first, `earliest_first` those born first (as an allocator running along
the schedule would) and `latest_first` those that die last (the same, running
backwards), then the largest, each at the lowest gap. No order wins on every
graph, which is why `rlx-plan-memory`'s `auto` keeps the best. Run on requests
without in-place merging, `first_fit` is exactly RLX's planner.

Cost. A fit depends only on the union of the byte ranges it must avoid, never on
which request holds which byte, so requests are never compared pair by pair.
Requests live over the whole schedule (inputs, parameters, constants) overlap
everything; they are kept as one coalesced set of byte ranges. The other placed
requests are indexed by live range (`TimeIndex`, a segment tree over the steps
holding coalesced byte ranges), so the bytes taken by everything overlapping a
live range are the union of O(log steps) sets. Planning costs O(n log steps)
set operations on sets that stay small when the arena is packed densely: linear
in practice even where many values live long (parameters cast to f16 once at the
top of a function by `rlx-amp` overlap every later temporary: comparing pairs
made that quadratic).
"""

from __future__ import annotations

import heapq
from bisect import bisect_left, bisect_right
from collections.abc import Callable, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Request:
    """A block to place: `size` bytes (aligned) live over `[birth, death]`."""

    size: int
    birth: int
    death: int
    raw_size: int
    """The unaligned size: the visiting order uses it, as RLX sorts by byte size."""
    order: int
    """Ties of `raw_size` are visited by increasing `order` (schedule order)."""


class ByteRanges:
    """Disjoint byte ranges `[start, end)`, sorted, touching ones merged."""

    def __init__(self) -> None:
        self.starts: list[int] = []
        self.ends: list[int] = []

    def add(self, start: int, end: int) -> bool:
        """Take `[start, end)` in; False when it was held already (nothing changes)."""
        starts, ends = self.starts, self.ends
        first = bisect_left(ends, start)  # first range ending at or after `start`
        if first < len(starts) and starts[first] <= start and end <= ends[first]:
            return False
        last = bisect_right(starts, end)  # ranges starting at or before `end`
        if first < last:
            start = min(start, starts[first])
            end = max(end, ends[last - 1])
        starts[first:last] = [start]
        ends[first:last] = [end]
        return True

    def __len__(self) -> int:
        return len(self.starts)


Blockers = list[tuple[int, int]]
"""Byte ranges `(start, end)` of placed requests that overlap the one being placed, sorted by start."""

Fit = Callable[[int, ByteRanges, Blockers], int]
"""Picks the offset for `size` bytes that avoids the ranges and the blockers."""


def lowest_fit(size: int, occupied: ByteRanges, blockers: Blockers) -> int:
    """The lowest offset where `size` bytes avoid `occupied` and every blocker.

    Starting at 0, jump past whatever overlaps `[offset, offset + size)`: the end
    of the occupied range there, or the furthest end among the blockers that start
    below `offset + size` (every offset before that end hits that blocker). Each
    jump passes a range or a blocker, so the loop ends.
    """
    offset = reach = scanned = 0
    starts, ends = occupied.starts, occupied.ends
    while True:
        moved = False
        k = bisect_right(ends, offset)
        if k < len(starts) and starts[k] < offset + size:
            offset, moved = ends[k], True
        while scanned < len(blockers) and blockers[scanned][0] < offset + size:
            reach = max(reach, blockers[scanned][1])
            scanned += 1
        if reach > offset:
            offset, moved = reach, True
        if not moved:
            return offset


def tightest_fit(size: int, occupied: ByteRanges, blockers: Blockers) -> int:
    """The start of the smallest free gap that holds `size` bytes (the lowest on ties),
    or the end of everything placed when no gap between them is large enough."""
    best_offset, best_room = None, None
    cursor = 0
    for start, end in heapq.merge(zip(occupied.starts, occupied.ends), blockers):
        room = start - cursor
        if room >= size and (best_room is None or room < best_room):
            best_offset, best_room = cursor, room
        cursor = max(cursor, end)
    return best_offset if best_offset is not None else cursor


Order = Callable[[Sequence[Request]], list[int]]
"""The order in which a strategy visits the requests."""


def by_size(requests: Sequence[Request]) -> list[int]:
    """Largest first (RLX's order); ties in schedule order."""
    return sorted(range(len(requests)), key=lambda i: (-requests[i].raw_size, requests[i].order))


def by_lifetime(requests: Sequence[Request]) -> list[int]:
    """Longest-lived first, then largest, then in schedule order."""
    return sorted(
        range(len(requests)),
        key=lambda i: (requests[i].birth - requests[i].death, -requests[i].raw_size, requests[i].order),
    )


def by_birth(requests: Sequence[Request]) -> list[int]:
    """Born first, then largest, then in schedule order."""
    return sorted(range(len(requests)), key=lambda i: (requests[i].birth, -requests[i].raw_size, requests[i].order))


def by_death(requests: Sequence[Request]) -> list[int]:
    """Dying last first, then largest, then in schedule order."""
    return sorted(range(len(requests)), key=lambda i: (-requests[i].death, -requests[i].raw_size, requests[i].order))


class TimeIndex:
    """The byte ranges of placed requests, found by the steps they live over.

    A segment tree over the steps `0..last_step`: a request is stored, as coalesced byte
    ranges, in `cover` at the O(log steps) nodes its live range splits into and in
    `within` at those nodes and their ancestors. Two node ranges that intersect are
    nested, so the requests overlapping a step range are those `within` the nodes
    it splits into and those that `cover` one of their ancestors.
    """

    def __init__(self, last_step: int) -> None:
        self.leaves = 1
        while self.leaves < last_step + 1:
            self.leaves *= 2
        self.cover: dict[int, ByteRanges] = {}
        self.within: dict[int, ByteRanges] = {}

    def split(self, birth: int, death: int) -> tuple[list[int], set[int]]:
        """The nodes exactly covering steps `[birth, death]`, and their strict ancestors."""
        nodes, low, high = [], birth + self.leaves, death + self.leaves + 1
        while low < high:
            if low & 1:
                nodes.append(low)
                low += 1
            if high & 1:
                high -= 1
                nodes.append(high)
            low >>= 1
            high >>= 1
        ancestors: set[int] = set()
        for node in nodes:
            node >>= 1
            while node and node not in ancestors:
                ancestors.add(node)
                node >>= 1
        return nodes, ancestors

    def add(self, split: tuple[list[int], set[int]], start: int, end: int) -> None:
        """Place `[start, end)` over the steps `split` (from `split(birth, death)`).

        A node's `within` holds its children's, so going up from a node stops at the
        first ancestor that holds the range already: all above it do too.
        """
        for node in split[0]:
            _ranges(self.cover, node).add(start, end)
            while node and _ranges(self.within, node).add(start, end):
                node >>= 1

    def overlapping(self, split: tuple[list[int], set[int]]) -> Blockers:
        """The byte ranges of placed requests live at some of the steps `split`, by start."""
        nodes, ancestors = split
        found: Blockers = []
        for node in nodes:
            if (ranges := self.within.get(node)) is not None:
                found.extend(zip(ranges.starts, ranges.ends))
        for node in ancestors:
            if (ranges := self.cover.get(node)) is not None:
                found.extend(zip(ranges.starts, ranges.ends))
        found.sort()
        return found


def _ranges(table: dict[int, ByteRanges], node: int) -> ByteRanges:
    ranges = table.get(node)
    if ranges is None:
        ranges = table[node] = ByteRanges()
    return ranges


def place(requests: Sequence[Request], end: int, fit: Fit, order: Order = by_size) -> list[int]:
    """Offsets for `requests` (schedule steps `0..end`), visited in `order`."""
    permanent = ByteRanges()  # placed requests live throughout
    everything = ByteRanges()  # every placed request, over all steps
    temporaries = TimeIndex(max((r.death for r in requests), default=0))  # the others, by live range
    offsets = [0] * len(requests)
    for i in order(requests):
        request = requests[i]
        size = request.size
        if size == 0:
            continue
        if request.birth == 0 and request.death >= end:
            offset = fit(size, everything, [])
            permanent.add(offset, offset + size)
        else:
            steps = temporaries.split(request.birth, request.death)
            offset = fit(size, permanent, temporaries.overlapping(steps))
            temporaries.add(steps, offset, offset + size)
        everything.add(offset, offset + size)
        offsets[i] = offset
    return offsets


def first_fit(requests: Sequence[Request], end: int) -> list[int]:
    """Largest first, each at the lowest offset that fits (RLX's greedy planner)."""
    return place(requests, end, lowest_fit)


def best_fit(requests: Sequence[Request], end: int) -> list[int]:
    """Largest first, each in the tightest gap that fits (less fragmentation of big gaps)."""
    return place(requests, end, tightest_fit)


def longest_first(requests: Sequence[Request], end: int) -> list[int]:
    """Longest-lived first, each at the lowest offset that fits."""
    return place(requests, end, lowest_fit, by_lifetime)


def earliest_first(requests: Sequence[Request], end: int) -> list[int]:
    """Born first, each at the lowest offset that fits."""
    return place(requests, end, lowest_fit, by_birth)


def latest_first(requests: Sequence[Request], end: int) -> list[int]:
    """Dying last first, each at the lowest offset that fits."""
    return place(requests, end, lowest_fit, by_death)


def arena_size(requests: Sequence[Request], offsets: Sequence[int]) -> int:
    return max((o + r.size for o, r in zip(offsets, requests)), default=0)
