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

Cost. Requests live over the whole schedule (inputs, parameters, constants)
overlap everything; they are kept as one coalesced set of byte ranges instead of
being compared one by one. Every other request is checked only against the
placed requests that overlap it in time, found by one sweep beforehand. With n
requests and E pairs of temporaries live at the same time, planning costs
O(n log n + E log E): linear in n for a graph whose number of simultaneously live
values is bounded (a stack of layers), quadratic only in a graph where everything
is live at once.
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

    def add(self, start: int, end: int) -> None:
        first = bisect_left(self.ends, start)  # first range ending at or after `start`
        last = bisect_right(self.starts, end)  # ranges starting at or before `end`
        if first < last:
            start = min(start, self.starts[first])
            end = max(end, self.ends[last - 1])
        self.starts[first:last] = [start]
        self.ends[first:last] = [end]

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


def _overlapping_in_time(requests: Sequence[Request], members: Sequence[int]) -> list[list[int]]:
    """For each of `members`, the other members whose live ranges overlap it (one sweep)."""
    neighbours: list[list[int]] = [[] for _ in requests]
    live: list[tuple[int, int]] = []  # (death, index) heap of members born so far and still live
    for i in sorted(members, key=lambda i: (requests[i].birth, i)):
        while live and live[0][0] < requests[i].birth:
            heapq.heappop(live)
        for _, j in live:
            neighbours[i].append(j)
            neighbours[j].append(i)
        heapq.heappush(live, (requests[i].death, i))
    return neighbours


def by_birth(requests: Sequence[Request]) -> list[int]:
    """Born first, then largest, then in schedule order."""
    return sorted(range(len(requests)), key=lambda i: (requests[i].birth, -requests[i].raw_size, requests[i].order))


def by_death(requests: Sequence[Request]) -> list[int]:
    """Dying last first, then largest, then in schedule order."""
    return sorted(range(len(requests)), key=lambda i: (-requests[i].death, -requests[i].raw_size, requests[i].order))


def place(requests: Sequence[Request], end: int, fit: Fit, order: Order = by_size) -> list[int]:
    """Offsets for `requests` (schedule steps `0..end`), visited in `order`."""
    throughout = [r.birth == 0 and r.death >= end for r in requests]
    temporaries = [i for i, r in enumerate(requests) if not throughout[i] and r.size]
    neighbours = _overlapping_in_time(requests, temporaries)
    permanent = ByteRanges()  # placed requests live throughout
    everything = ByteRanges()  # every placed request, over all steps
    offsets: list[int | None] = [None] * len(requests)
    for i in order(requests):
        size = requests[i].size
        if size == 0:
            offsets[i] = 0
            continue
        if throughout[i]:
            offset = fit(size, everything, [])
            permanent.add(offset, offset + size)
        else:
            blockers = sorted(
                (o, o + requests[j].size) for j in neighbours[i] if (o := offsets[j]) is not None
            )
            offset = fit(size, permanent, blockers)
        everything.add(offset, offset + size)
        offsets[i] = offset
    return [o if o is not None else 0 for o in offsets]


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
