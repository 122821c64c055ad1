"""The verifier of a memory plan: every rule a plan must keep, checked against the IR.

`prove(plan)` re-derives the live ranges from the function (never trusting the
plan for them) and checks, each failure a `PlanError` at the value concerned:

1. every top-level value has a placement, of a kind its op allows (a view only
   where the op can alias its operand, external only for arguments, constants
   and views of external values), and every op its derived phase;
2. every slot holds exactly its value's bytes, at an aligned offset, inside the
   arena; every view sits where its root's slot says, inside the root;
3. no two buffers share a byte while both are live, except a result marked
   `in_place` written over an operand buffer that dies at that op (one the op may
   overwrite: `liveness.Layout.in_place`), in exactly that operand's slot;
4. the outputs' result attributes repeat their values' placements, and the
   figures (`naive_bytes`, `lower_bound_bytes`) are the ones the IR implies.

The overlap check sweeps the steps in order, keeping the live slots sorted by
offset: O(n log n) for n buffers.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xdsl.dialects import func
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue

from rlx_xdsl.dialects.lir.attrs import (
    PHASE_KEY,
    PLACEMENTS,
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
    PlanError,
    Role,
    Schedule,
    defining_site,
    derive_phases,
    lower_bound_bytes,
    naive_bytes,
)
from rlx_xdsl.dialects.lir.names import ValueNames
from rlx_xdsl.dialects.traits import WritesInPlace

if TYPE_CHECKING:
    from rlx_xdsl.dialects.lir.plan import PlanOp

ROLE_OF = {SlotAttr: Role.BUFFER, ViewAttr: Role.VIEW, ExternalAttr: Role.EXTERNAL}


def _dict_entry(attrs: ArrayAttr | None, index: int) -> dict[str, Attribute]:
    if attrs is None or index >= len(attrs.data):
        return {}
    entry = attrs.data[index]
    return dict(entry.data) if isinstance(entry, DictionaryAttr) else {}


class _Proof:
    def __init__(self, plan: PlanOp, function: func.FuncOp):
        self.plan = plan
        self.function = function
        self.names = ValueNames(function)
        self.alignment = plan.alignment.value.data
        self.arena = plan.arena_bytes.value.data
        self.schedule = Schedule.of(function, skip=lambda op: isinstance(op, type(plan)))  # plans compute nothing

    def fail(self, site: Operation, message: str) -> PlanError:
        return PlanError(site, f"'{self.plan.name}' {message}")

    def name(self, index: int) -> str:
        return self.names[self.schedule.values[index].value]

    # 1. Placements and phases ---------------------------------------------------------

    def placements(self) -> list[Placement]:
        found: list[Placement] = []
        for facts in self.schedule.values:
            value, site = facts.value, defining_site(facts.value)
            if isinstance(value, BlockArgument):
                attr = _dict_entry(self.function.arg_attrs, value.index).get(SLOT_KEY)
            else:
                attr = value.owner.attributes.get(SLOT_KEY)
                if len(value.owner.results) != 1 and attr is not None:
                    if not isinstance(attr, ArrayAttr) or len(attr.data) != len(value.owner.results):
                        raise self.fail(
                            site,
                            f"{SLOT_KEY} of an op with {len(value.owner.results)} results must be an "
                            "array with one placement per result",
                        )
                    attr = attr.data[value.index]
            if attr is None:
                raise self.fail(
                    site,
                    f"{self.name(facts.index)} has no placement ({SLOT_KEY}): the plan does not match "
                    "the function; re-run rlx-plan-memory",
                )
            if not isinstance(attr, PLACEMENTS):
                raise self.fail(
                    site,
                    f"{SLOT_KEY} of {self.name(facts.index)} must be a #lir.slot, #lir.view or "
                    f"#lir.external, got {attr}",
                )
            found.append(attr)
        return found

    def check_roles(self, placements: list[Placement]) -> list[Role]:
        roles = [ROLE_OF[type(p)] for p in placements]
        for facts in self.schedule.values:
            i, site = facts.index, defining_site(facts.value)
            source = facts.view_of
            if roles[i] is Role.VIEW:
                if source is None:
                    raise self.fail(
                        site,
                        f"{self.name(i)} is placed as a view, but '{site.name}' computes a new buffer "
                        "(only reshape, same-dtype cast and contiguous narrow alias their operand)",
                    )
                if roles[source] is Role.EXTERNAL:
                    raise self.fail(
                        site,
                        f"{self.name(i)} is a view of {self.name(source)}, which is outside the arena: "
                        "it must be #lir.external too",
                    )
            if roles[i] is Role.EXTERNAL and facts.kind is Kind.RESULT:
                if source is None or roles[source] is not Role.EXTERNAL:
                    raise self.fail(
                        site,
                        f"{self.name(i)} is computed by the function, so it must live in the arena, "
                        "not be #lir.external",
                    )
        return roles

    def check_phases(self) -> None:
        for op, phase in zip(self.schedule.ops, derive_phases(self.schedule)):
            attr = op.attributes.get(PHASE_KEY)
            if not isinstance(attr, PhaseAttr):
                raise self.fail(
                    op, f"'{op.name}' has no {PHASE_KEY} (expected #lir.phase<{phase.value}>); re-run rlx-plan-memory"
                )
            if attr.data is not phase:
                raise self.fail(
                    op,
                    f"'{op.name}' is in phase {phase.value}, not {attr.data.value} (constants are prologue, "
                    "top-k and what follows the last compute or top-k op are epilogue)",
                )

    # 2. Slots and views ----------------------------------------------------------------

    def check_slots(self, placements: list[Placement], layout: Layout) -> None:
        for facts, placement in zip(self.schedule.values, placements):
            i, site = facts.index, defining_site(facts.value)
            if isinstance(placement, ExternalAttr):
                continue
            if placement.size.data != facts.nbytes:
                raise self.fail(
                    site,
                    f"{self.name(i)} has type {facts.value.type} ({facts.nbytes} bytes), "
                    f"but its placement says size = {placement.size.data}",
                )
            if isinstance(placement, SlotAttr):
                if placement.start % self.alignment:
                    raise self.fail(
                        site,
                        f"slot of {self.name(i)} at offset {placement.start} is not aligned to "
                        f"{self.alignment} bytes",
                    )
                if placement.end > self.arena:
                    raise self.fail(
                        site,
                        f"slot of {self.name(i)} [{placement.start}, {placement.end}) lies outside the "
                        f"arena of {self.arena} bytes",
                    )
                continue
            self._check_view(facts.index, placement, placements, layout, site)

    def _check_view(
        self, i: int, view: ViewAttr, placements: list[Placement], layout: Layout, site: Operation
    ) -> None:
        root = layout.root[i]
        root_slot = placements[root]
        assert isinstance(root_slot, SlotAttr)
        expected = layout.byte_offset[i]
        if view.byte_offset.data != expected:
            raise self.fail(
                site,
                f"view {self.name(i)} starts {expected} bytes into its root {self.name(root)}, "
                f"not byte_offset = {view.byte_offset.data}",
            )
        if view.start != root_slot.start + expected:
            raise self.fail(
                site,
                f"view {self.name(i)} must be at offset {root_slot.start + expected} "
                f"(root {self.name(root)} at {root_slot.start} + {expected}), not {view.start}",
            )
        if expected + view.size.data > root_slot.size.data:
            raise self.fail(
                site,
                f"view {self.name(i)} [{view.start}, {view.end}) runs past the end of its root "
                f"{self.name(root)} [{root_slot.start}, {root_slot.end})",
            )

    def check_outputs(self, placements: list[Placement]) -> None:
        for position, i in enumerate(self.schedule.outputs):
            declared = _dict_entry(self.function.res_attrs, position).get(SLOT_KEY)
            if declared != placements[i]:
                shown = "nothing" if declared is None else str(declared)
                raise self.fail(
                    self.function,
                    f"result #{position} of @{self.function.sym_name.data} declares {SLOT_KEY} = {shown}, "
                    f"but it returns {self.name(i)}, placed at {placements[i]}",
                )

    # 3. No shared bytes between live buffers ---------------------------------------------

    def check_overlaps(self, placements: list[Placement], layout: Layout) -> None:
        born: dict[int, list[int]] = defaultdict(list)
        dying: dict[int, list[int]] = defaultdict(list)
        for i in layout.buffers:
            if placements[i].size.data:
                born[layout.birth[i]].append(i)
                dying[layout.death[i]].append(i)
        starts: list[int] = []
        owners: list[int] = []
        for step in range(self.schedule.end + 1):
            for i in born.get(step, ()):
                self._place(i, step, starts, owners, placements, layout)
            for i in dying.get(step, ()):
                k = bisect_right(starts, placements[i].start) - 1
                if 0 <= k and owners[k] == i:
                    del starts[k], owners[k]

    def _place(
        self, i: int, step: int, starts: list[int], owners: list[int], placements: list[Placement], layout: Layout
    ) -> None:
        """Add buffer `i` to the live slots (sorted by start, disjoint), or fail on an overlap."""
        slot = placements[i]
        assert isinstance(slot, SlotAttr)
        k = bisect_right(starts, slot.start)
        first = k - 1 if k > 0 and placements[owners[k - 1]].end > slot.start else k
        last = k
        while last < len(starts) and starts[last] < slot.end:
            last += 1
        overlapping = owners[first:last]
        if not overlapping:
            if slot.writes_in_place:
                raise self.fail(
                    defining_site(self.schedule.values[i].value),
                    f"{self.name(i)} is marked in_place, but its slot is no operand's slot",
                )
            starts.insert(k, slot.start)
            owners.insert(k, i)
            return
        other = overlapping[0]
        self._check_in_place(i, other, step, placements, layout)
        owners[first] = i  # `other` dies at this step: the slot is `i`'s from now on

    def _check_in_place(self, i: int, other: int, step: int, placements: list[Placement], layout: Layout) -> None:
        """`i`'s slot overlaps `other`'s at `step`: allowed only as a valid in-place write."""
        facts = self.schedule.values[i]
        site = defining_site(facts.value)
        mine, theirs = placements[i], placements[other]
        assert isinstance(mine, SlotAttr) and isinstance(theirs, SlotAttr)

        def clash(why: str) -> PlanError:
            return self.fail(
                site,
                f"{self.name(i)} [{mine.start}, {mine.end}) overlaps {self.name(other)} "
                f"[{theirs.start}, {theirs.end}) while both are live at step {step}{why}",
            )

        if not mine.writes_in_place:
            raise clash(f" ({self.name(other)} is live over steps {self._span(other, layout)})")
        op = facts.op
        if op is None or not op.has_trait(WritesInPlace):
            raise clash(f": '{site.name}' cannot write its result in place")
        if other not in layout.in_place.get(i, ()):
            raise clash(f": {self._why_not_in_place(i, other, step, layout)}")
        if (mine.start, mine.end) != (theirs.start, theirs.end):
            raise clash(": an in-place result must take exactly the slot of the operand it overwrites")

    def _why_not_in_place(self, i: int, other: int, step: int, layout: Layout) -> str:
        facts = self.schedule.values[other]
        if facts.kind.lives_throughout:
            return f"{self.name(other)} is an {facts.kind.value}, which lives throughout and is never overwritten"
        if layout.death[other] != step:
            span = self._span(other, layout)
            return f"{self.name(other)} is still read after step {step} (it lives over steps {span})"
        return (
            f"{self.name(other)} is not an operand '{defining_site(self.schedule.values[i].value).name}' "
            "may overwrite (a whole buffer of the result's shape and element size, read only elementwise)"
        )

    def _span(self, i: int, layout: Layout) -> str:
        return f"{layout.birth[i]}..{layout.death[i]}"

    # 4. Figures ----------------------------------------------------------------------------

    def check_figures(self, layout: Layout) -> None:
        if self.arena % self.alignment:
            raise self.fail(
                self.plan, f"arena_bytes = {self.arena} is not a multiple of the alignment {self.alignment}"
            )
        claims = {
            "naive_bytes": (self.plan.naive_bytes.value.data, naive_bytes(layout, self.alignment)),
            "lower_bound_bytes": (self.plan.lower_bound_bytes.value.data, lower_bound_bytes(layout, self.alignment)),
        }
        for name, (claimed, actual) in claims.items():
            if claimed != actual:
                raise self.fail(
                    self.plan,
                    f"{name} = {claimed}, but the function's buffers give {actual} "
                    "(if the function changed since it was planned, re-run rlx-plan-memory)",
                )


@dataclass
class PlannedFunction:
    """A planned function as its plan states it: what the executor and the reports read."""

    plan: PlanOp
    schedule: Schedule
    placements: list[Placement]
    layout: Layout

    def placement(self, value: SSAValue) -> Placement:
        return self.placements[self.schedule.index[value]]


def _function_of(plan: PlanOp) -> func.FuncOp:
    function = plan.parent_op()
    block = plan.parent_block()
    if not isinstance(function, func.FuncOp) or block is None or block is not function.body.blocks.first:
        raise PlanError(plan, f"'{plan.name}' must be the first op of a func.func body")
    if block.first_op is not plan:
        raise PlanError(plan, f"'{plan.name}' must be the first op of @{function.sym_name.data}")
    return function


def read_plan(plan: PlanOp) -> PlannedFunction:
    """The placements of the function `plan` opens, and the live ranges they imply.

    Checks only what is needed to read them (every value placed, views where
    views can be); `prove` checks the rest.
    """
    proof = _Proof(plan, _function_of(plan))
    placements = proof.placements()
    layout = Layout.of(proof.schedule, proof.check_roles(placements))
    return PlannedFunction(plan, proof.schedule, placements, layout)


def prove(plan: PlanOp) -> None:
    """Check every rule of the plan of the function holding `plan`; raise `PlanError` if one fails."""
    proof = _Proof(plan, _function_of(plan))
    placements = proof.placements()
    layout = Layout.of(proof.schedule, proof.check_roles(placements))
    proof.check_phases()
    proof.check_slots(placements, layout)
    proof.check_outputs(placements)
    proof.check_overlaps(placements, layout)
    proof.check_figures(layout)
