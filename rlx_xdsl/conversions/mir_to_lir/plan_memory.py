"""`rlx-plan-memory`: lower MIR to LIR by planning every function's memory on one arena.

For each `func.func` the pass decides how each value is stored (from the traits
and the options), derives the live ranges (`dialects.lir.liveness`), packs the
buffers into an arena (`allocate`) and writes the plan into the IR: a `lir.plan`
op opening the function, a placement on every value and a phase on every op.
Planning an already planned function replaces its plan.

* Views: a `ViewOf` op (reshape, same-dtype cast, contiguous narrow) aliases its
  operand's buffer, as RLX's `pure_view_offset`; a view of an external value is
  external too.
* In place (not in RLX): an op with the `WritesInPlace` trait writes its result
  over an operand buffer whose last read is that op, when the strategy allows it.
* Strategies: `first-fit`, `best-fit`, `longest-first`, `earliest-first` and
  `latest-first` (with in-place writes; see `allocate`), `rlx` (RLX 0.2.2's planner: first fit, no in-place
  writes) and `auto`, the smallest arena of them all, so never worse than RLX's.

The pass works on whole functions rather than through rewrite patterns: a memory
plan is one global decision over all of a function's values, not a local rewrite.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.conversions.mir_to_lir import allocate
from rlx_xdsl.conversions.mir_to_lir.allocate import Request
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.dialects.lir.attrs import (
    PHASE_KEY,
    SLOT_KEY,
    ExternalAttr,
    PhaseAttr,
    Placement,
    SlotAttr,
    ViewAttr,
)
from rlx_xdsl.dialects.lir.liveness import (
    Kind,
    Layout,
    Role,
    Schedule,
    align_up,
    derive_phases,
    lower_bound_bytes,
    naive_bytes,
)
from rlx_xdsl.dialects.lir.plan import PlanOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.statistics import Statistic

PLANNED_BYTES = Statistic("arena-bytes", "Bytes of the planned arenas")
NAIVE_BYTES = Statistic("naive-bytes", "Bytes every buffer would take unshared")
from rlx_xdsl.transforms.pipeline import KeepsPlansValid

MAX_ALIGNMENT = 2**30
"""The largest slot alignment (1 GiB, a huge page): larger ones would push a few slots'
offsets past i64."""
STRATEGIES = ("auto", "first-fit", "best-fit", "longest-first", "earliest-first", "latest-first", "rlx")

PACKERS = {
    "first-fit": allocate.first_fit,
    "best-fit": allocate.best_fit,
    "longest-first": allocate.longest_first,
    "earliest-first": allocate.earliest_first,
    "latest-first": allocate.latest_first,
    "rlx": allocate.first_fit,
}
"""The packing algorithm of each strategy (`rlx` is first fit without in-place writes)."""


@dataclass(frozen=True)
class Options:
    """What to allocate and how: the pass options, as the planner reads them."""

    alignment: int = field(default=64, metadata={"range": (1, MAX_ALIGNMENT)})
    allocate_params: bool = True
    allocate_inputs: bool = True
    allocate_constants: bool = True
    strategy: str = "auto"

    def allocates(self, kind: Kind) -> bool:
        return {
            Kind.INPUT: self.allocate_inputs,
            Kind.PARAM: self.allocate_params,
            Kind.CONSTANT: self.allocate_constants,
            Kind.RESULT: True,
        }[kind]


def choose_roles(schedule: Schedule, options: Options) -> list[Role]:
    """Views where an op can alias an arena buffer; external values the options leave out."""
    roles: list[Role] = []
    for facts in schedule.values:
        if not options.allocates(facts.kind):
            roles.append(Role.EXTERNAL)
        elif facts.view_of is None:
            roles.append(Role.BUFFER)
        else:
            roles.append(Role.EXTERNAL if roles[facts.view_of] is Role.EXTERNAL else Role.VIEW)
    return roles


# Packing -------------------------------------------------------------------------------


@dataclass
class Packing:
    """Where each buffer goes: its offset, and whether it overwrites a dying operand."""

    strategy: str
    arena: int
    offsets: dict[int, int]
    in_place: set[int] = field(default_factory=set)


def _groups(layout: Layout, in_place: bool) -> list[list[int]]:
    """The buffers that share one slot: alone, or a chain of in-place writes."""
    group_of: dict[int, list[int]] = {}
    groups: list[list[int]] = []
    for i in layout.buffers:
        partners = layout.in_place.get(i) if in_place else None
        if partners:
            group = group_of[partners[0]]
            group.append(i)
        else:
            group = [i]
            groups.append(group)
        group_of[i] = group
    return groups


def pack(layout: Layout, alignment: int, strategy: str) -> Packing:
    """Run one strategy (any but `auto`)."""
    fit = PACKERS[strategy]
    groups = _groups(layout, in_place=strategy != "rlx")
    values = layout.schedule.values
    requests = [
        Request(
            size=align_up(values[g[0]].nbytes, alignment),
            birth=min(layout.birth[i] for i in g),
            death=max(layout.death[i] for i in g),
            raw_size=values[g[0]].nbytes,
            order=g[0],
        )
        for g in groups
    ]
    offsets = fit(requests, layout.schedule.end)
    placed = {i: offset for g, offset in zip(groups, offsets) for i in g}
    chained = {i for g in groups for i in g[1:]}
    arena = align_up(allocate.arena_size(requests, offsets), alignment)
    return Packing(strategy, arena, placed, chained)


def best_packing(layout: Layout, alignment: int, strategy: str, bound: int) -> Packing:
    """The packing of `strategy`, or under `auto` the smallest arena of all (earliest on ties).

    `auto` stops at the first packing whose arena is the lower bound `bound`: no later
    strategy can beat it, and ties go to the earliest anyway.
    """
    if strategy != "auto":
        return pack(layout, alignment, strategy)
    best = None
    for candidate in STRATEGIES[1:]:
        packing = pack(layout, alignment, candidate)
        if best is None or packing.arena < best.arena:
            best = packing
        if best.arena <= bound:
            break
    return best


# Writing the plan into the IR -----------------------------------------------------------


def placements(layout: Layout, packing: Packing) -> list[Placement]:
    result: list[Placement] = []
    attrs = _Interned()
    for facts, role in zip(layout.schedule.values, layout.roles):
        i = facts.index
        if role is Role.BUFFER:
            result.append(attrs.get(SlotAttr, packing.offsets[i], facts.nbytes, i in packing.in_place))
        elif role is Role.VIEW:
            root_offset = packing.offsets[layout.root[i]]
            result.append(attrs.get(ViewAttr, root_offset + layout.byte_offset[i], facts.nbytes, layout.byte_offset[i]))
        else:
            result.append(attrs.get(ExternalAttr))
    return result


class _Interned:
    """One attribute per distinct value: layers reuse the same slots, and building an
    attribute (which verifies it) costs more than looking it up."""

    def __init__(self) -> None:
        self._known: dict[tuple, Attribute] = {}

    def get(self, cls: type[Attribute], *args: object) -> Attribute:
        key = (cls, *args)
        attr = self._known.get(key)
        if attr is None:
            attr = self._known[key] = cls(*args)
        return attr


def _with_entry(attrs: ArrayAttr | None, count: int, values: Sequence[Attribute | None]) -> ArrayAttr:
    """Argument or result attribute dictionaries with `lir.slot` set (or removed, for None)."""
    dicts = []
    for index in range(count):
        entry = dict(attrs.data[index].data) if attrs is not None and index < len(attrs.data) else {}
        entry.pop(SLOT_KEY, None)
        if values[index] is not None:
            entry[SLOT_KEY] = values[index]
        dicts.append(DictionaryAttr(entry))
    return ArrayAttr(dicts)


def strip_plan(function: func.FuncOp) -> None:
    """Remove a previous plan: the `lir.plan` op and every placement and phase."""
    plan = plan_of(function)
    if plan is not None:
        function.body.block.erase_op(plan)
    for op in function.body.block.ops:
        op.attributes.pop(SLOT_KEY, None)
        op.attributes.pop(PHASE_KEY, None)
    block = function.body.block
    if function.arg_attrs is not None:
        function.arg_attrs = _with_entry(function.arg_attrs, len(block.args), [None] * len(block.args))
    if function.res_attrs is not None:
        n = len(function.function_type.outputs)
        function.res_attrs = _with_entry(function.res_attrs, n, [None] * n)


def write_plan(schedule: Schedule, layout: Layout, packing: Packing, alignment: int, bound: int) -> PlanOp:
    """Annotate the function with the plan and open it with a `lir.plan` op."""
    function, block = schedule.function, schedule.function.body.block
    placed = placements(layout, packing)
    function.arg_attrs = _with_entry(function.arg_attrs, len(block.args), placed[: len(block.args)])
    function.res_attrs = _with_entry(
        function.res_attrs, len(schedule.outputs), [placed[i] for i in schedule.outputs]
    )
    phases = _Interned()
    for op, phase in zip(schedule.ops, derive_phases(schedule)):
        results = [placed[schedule.index[r]] for r in op.results]
        if len(results) == 1:
            op.attributes[SLOT_KEY] = results[0]
        elif results:
            op.attributes[SLOT_KEY] = ArrayAttr(results)
        op.attributes[PHASE_KEY] = phases.get(PhaseAttr, phase)
    plan = PlanOp(
        arena_bytes=packing.arena,
        naive_bytes=naive_bytes(layout, alignment),
        lower_bound_bytes=bound,
        alignment=alignment,
        strategy=packing.strategy,
    )
    Emitter(Builder(InsertPoint.at_start(block)), function.location).insert(plan)
    return plan


def plan_function(function: func.FuncOp, options: Options) -> PlanOp:
    """Plan `function`'s memory (replacing any previous plan) and return its `lir.plan`."""
    strip_plan(function)
    schedule = Schedule.of(function)
    layout = Layout.of(schedule, choose_roles(schedule, options))
    bound = lower_bound_bytes(layout, options.alignment)
    packing = best_packing(layout, options.alignment, options.strategy, bound)
    return write_plan(schedule, layout, packing, options.alignment, bound)


# The pass ------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanMemoryPass(KeepsPlansValid, ModulePass):
    """Plan each function's memory on one arena: MIR to LIR (a slot per buffer, views, phases).

    Options: `alignment` of every slot (a power of two up to 2^30, default 64);
    `allocate-params`, `allocate-inputs`, `allocate-constants` put those values in
    the arena (default: all, as RLX's `inference()`); `strategy` = `auto` (the
    smallest arena of the others), `first-fit`, `best-fit`, `longest-first`,
    `earliest-first`, `latest-first` or `rlx` (RLX's planner, no in-place writes). `report=FILE`
    writes the plan's figures and a table of its buffers (`-` for stderr);
    `svg=FILE` draws the arena over time. Shapes must be static: bind them with
    rlx-specialize first.
    """

    name = "rlx-plan-memory"
    STATISTICS = (PLANNED_BYTES, NAIVE_BYTES)

    alignment: int = field(default=64, metadata={"range": (1, MAX_ALIGNMENT)})
    allocate_params: bool = True
    allocate_inputs: bool = True
    allocate_constants: bool = True
    strategy: str = field(default="auto", metadata={"syntax": "|".join(STRATEGIES)})
    report: str | None = field(default=None, metadata={"syntax": "FILE|-", "example": "-"})
    svg: str | None = field(default=None, metadata={"syntax": "FILE"})

    def planner_options(self) -> Options:
        if self.strategy not in STRATEGIES:
            raise PassFailedException(
                f"unknown strategy '{self.strategy}' (expected one of: {', '.join(STRATEGIES)})"
            )
        if self.alignment < 1 or self.alignment & (self.alignment - 1):
            raise PassFailedException(f"alignment must be a power of two, got {self.alignment}")
        return Options(
            self.alignment, self.allocate_params, self.allocate_inputs, self.allocate_constants, self.strategy
        )

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        options = self.planner_options()
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp) and not f.is_declaration]
        plans = [plan_function(f, options) for f in functions]
        for plan in plans:
            PLANNED_BYTES.add(plan.arena_bytes.value.data)
            NAIVE_BYTES.add(plan.naive_bytes.value.data)
        if self.report is not None:
            from rlx_xdsl.conversions.mir_to_lir.report import text_report

            _write(self.report, "".join(text_report(plan) for plan in plans))
        if self.svg is not None:
            from rlx_xdsl.conversions.mir_to_lir.report import svg_report

            _write(self.svg, svg_report(plans))


def _write(path: str, text: str) -> None:
    if path == "-":
        sys.stderr.write(text)
        return
    try:
        Path(path).write_text(text)
    except OSError as e:
        raise PassFailedException(f"cannot write '{path}': {e.strerror}") from e
