"""RLX 0.2.2's memory planner, transcribed from its description: the planner's oracle.

`memory.rs::plan_memory_aligned_inner`, written as plainly as
possible and independently of `conversions.mir_to_lir.allocate`: buffers by
decreasing byte size (ties in schedule order); the candidate offsets are 0 and
the end of every placed buffer, aligned up; the lowest candidate whose bytes
overlap no placed buffer live at a common step (bounds included) wins. It costs
O(n^3) for n buffers: fine for tests on small graphs, too slow for benchmarks
(which use `rlx-plan-memory{strategy=rlx}`, tested equal to this).

`rlx_plan(function)` plans a function's buffers as RLX would (inputs, parameters
and constants all allocated, views aliased, no in-place writes) and returns
`{buffer value: offset}` and the arena size (rounded up to the alignment).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.ir import SSAValue

from rlx_xdsl.dialects.lir.liveness import Layout, Role, Schedule


@dataclass(frozen=True)
class Buffer:
    size: int
    birth: int
    death: int


def _align(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def rlx_offsets(buffers: Sequence[Buffer], alignment: int) -> list[int]:
    """RLX's greedy first fit by decreasing size over `buffers` (listed in schedule order)."""
    order = sorted(range(len(buffers)), key=lambda i: (-buffers[i].size, i))
    offsets: dict[int, int] = {}
    for i in order:
        b = buffers[i]
        candidates = sorted({0} | {offsets[j] + buffers[j].size for j in offsets})
        for candidate in candidates:
            offset = _align(candidate, alignment)
            if not any(
                offset < offsets[j] + buffers[j].size
                and offsets[j] < offset + b.size
                and b.birth <= buffers[j].death
                and b.death >= buffers[j].birth
                for j in offsets
            ):
                break
        offsets[i] = offset
    return [offsets[i] for i in range(len(buffers))]


def rlx_plan(function: func.FuncOp, alignment: int = 64) -> tuple[dict[SSAValue, int], int]:
    """RLX's plan of `function`: each buffer's offset, and the arena size."""
    schedule = Schedule.of(function)
    roles = []
    for facts in schedule.values:
        is_view = facts.view_of is not None
        roles.append(Role.VIEW if is_view else Role.BUFFER)
    layout = Layout.of(schedule, roles)
    ids = layout.buffers
    buffers = [Buffer(schedule.values[i].nbytes, layout.birth[i], layout.death[i]) for i in ids]
    offsets = rlx_offsets(buffers, alignment)
    arena = max((o + b.size for o, b in zip(offsets, buffers)), default=0)
    return {schedule.values[i].value: o for i, o in zip(ids, offsets)}, _align(arena, alignment)
