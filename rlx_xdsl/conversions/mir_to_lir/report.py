"""Reports of a memory plan, read back from the planned IR: a text table and an SVG picture.

Both read only the IR (`lir.plan`, the placements and the live ranges they imply),
so they describe any planned function, hand-edited ones included.

    @f: arena 1280 bytes, lower bound 1280 (arena/bound 1.000), naive 2304 (arena/naive 0.556)
        alignment 64, strategy first-fit; 5 buffers, 1 in place, 2 views, 0 external
      offset   size  steps  phase     value   what
           0    512  0..6   prologue  %x      input "x"
         512    512  1..3   steady    %0      mir.exp
         512    512  3..6   steady    %1      mir.neg, in place over %0
    ...
"""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import BlockArgument

from rlx_xdsl.dialects.lir.attrs import ExternalAttr, SlotAttr, ViewAttr
from rlx_xdsl.dialects.lir.liveness import Kind, Role, derive_phases
from rlx_xdsl.dialects.lir.names import ValueNames
from rlx_xdsl.dialects.lir.plan import PlanOp
from rlx_xdsl.dialects.lir.proof import PlannedFunction, read_plan
from rlx_xdsl.ir.graph import argument_name


def _ratio(a: int, b: int) -> str:
    return f"{a / b:.3f}" if b else "-"


def _what(planned: PlannedFunction, index: int, names: ValueNames) -> str:
    facts = planned.schedule.values[index]
    value = facts.value
    if isinstance(value, BlockArgument):
        return f'{facts.kind.value} "{argument_name(planned.schedule.function, value.index)}"'
    placement = planned.placements[index]
    text = value.owner.name
    if isinstance(placement, SlotAttr) and placement.writes_in_place:
        over = planned.layout.in_place.get(index, [])
        text += f", in place over {names[planned.schedule.values[over[0]].value]}" if over else ", in place"
    if isinstance(placement, ViewAttr):
        root = planned.layout.root[index]
        text += f", view of {names[planned.schedule.values[root].value]} +{placement.byte_offset.data}"
    return text


def summary(plan: PlanOp) -> str:
    """The figures of one plan, on one line."""
    arena, bound = plan.arena_bytes.value.data, plan.lower_bound_bytes.value.data
    naive = plan.naive_bytes.value.data
    return (
        f"arena {arena} bytes, lower bound {bound} (arena/bound {_ratio(arena, bound)}), "
        f"naive {naive} (arena/naive {_ratio(arena, naive)})"
    )


def _counts(planned: PlannedFunction) -> str:
    roles = planned.layout.roles
    in_place = sum(1 for p in planned.placements if isinstance(p, SlotAttr) and p.writes_in_place)
    return (
        f"{roles.count(Role.BUFFER)} buffers, {in_place} in place, {roles.count(Role.VIEW)} views, "
        f"{roles.count(Role.EXTERNAL)} external"
    )


def _table(rows: list[list[str]]) -> list[str]:
    """Columns padded to their widest cell: numbers right-aligned, the last column free."""
    widths = [max(len(row[c]) for row in rows) for c in range(len(rows[0]) - 1)]
    lines = []
    for row in rows:
        cells = [cell.rjust(w) if c < 2 else cell.ljust(w) for c, (cell, w) in enumerate(zip(row, widths))]
        lines.append("  " + "  ".join(cells) + "  " + row[-1])
    return lines


def text_report(plan: PlanOp) -> str:
    """The figures and one row per value: arena values by offset, then external ones.

    `steps` is the live range of the bytes the value occupies (its root's, for a view).
    """
    planned = read_plan(plan)
    schedule, layout = planned.schedule, planned.layout
    names = ValueNames(schedule.function)
    phases = {op: phase.value for op, phase in zip(schedule.ops, derive_phases(schedule))}
    strategy = plan.strategy.data if isinstance(plan.strategy, StringAttr) else "unknown"
    keyed = []
    for facts, placement in zip(schedule.values, planned.placements):
        i, root = facts.index, layout.root[facts.index]
        external = isinstance(placement, ExternalAttr)
        offset = 0 if external else placement.offset.data
        row = [
            "-" if external else str(offset),
            str(facts.nbytes),
            f"{layout.birth[root]}..{layout.death[root]}",
            "prologue" if facts.op is None else phases[facts.op],
            names[facts.value],
            _what(planned, i, names),
        ]
        keyed.append(((external, offset, layout.birth[root], i), row))
    header = ["offset", "size", "steps", "phase", "value", "what"]
    return "\n".join(
        [
            f"@{schedule.function.sym_name.data}: {summary(plan)}",
            f"    alignment {plan.alignment.value.data}, strategy {strategy}; {_counts(planned)}",
            *_table([header] + [row for _, row in sorted(keyed, key=lambda kr: kr[0])]),
        ]
    ) + "\n"


# SVG -------------------------------------------------------------------------------------

_COLOURS = {Kind.INPUT: "#7fb77e", Kind.PARAM: "#6c8ebf", Kind.CONSTANT: "#b0b0b0", Kind.RESULT: "#f0a35e"}
_IN_PLACE = "#d9534f"
WIDTH, PANEL, MARGIN = 900, 360, 40


def _panel(plan: PlanOp, top: int) -> list[str]:
    planned = read_plan(plan)
    schedule, layout = planned.schedule, planned.layout
    names = ValueNames(schedule.function)
    arena = max(plan.arena_bytes.value.data, 1)
    steps = schedule.end + 1
    x_scale = (WIDTH - 2 * MARGIN) / steps
    y_scale = (PANEL - 2 * MARGIN) / arena
    title = f"@{schedule.function.sym_name.data}: {summary(plan)}"
    parts = [
        f'<text x="{MARGIN}" y="{top + 20}" font-size="13">{escape(title)}</text>',
        f'<rect x="{MARGIN}" y="{top + MARGIN}" width="{WIDTH - 2 * MARGIN}" height="{PANEL - 2 * MARGIN}" '
        'fill="none" stroke="#444"/>',
        f'<text x="{MARGIN}" y="{top + PANEL - 10}" font-size="11">step 0 .. {schedule.end} '
        f"(x), byte 0 .. {arena} (y, down)</text>",
    ]
    for i in layout.buffers:
        slot = planned.placements[i]
        assert isinstance(slot, SlotAttr)
        facts = schedule.values[i]
        x = MARGIN + layout.birth[i] * x_scale
        y = top + MARGIN + slot.start * y_scale
        w = max((layout.death[i] + 1 - layout.birth[i]) * x_scale, 1)
        h = max(slot.size.data * y_scale, 0.5)
        colour = _IN_PLACE if slot.writes_in_place else _COLOURS[facts.kind]
        label = f"{names[facts.value]} [{slot.start}, {slot.end}) steps {layout.birth[i]}..{layout.death[i]}"
        parts.append(
            f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" fill="{colour}" '
            f'stroke="#222" stroke-width="0.3"><title>{escape(label)}</title></rect>'
        )
    return parts


def svg_report(plans: Sequence[PlanOp]) -> str:
    """One panel per planned function: buffers as boxes, steps across, arena bytes down."""
    height = max(len(plans), 1) * PANEL
    body = [part for k, plan in enumerate(plans) for part in _panel(plan, k * PANEL)]
    legend = "inputs green, parameters blue, constants grey, temporaries orange, in-place writes red"
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height + 20}" '
        f'font-family="monospace">\n<desc>{legend}</desc>\n' + "\n".join(body) + "\n</svg>\n"
    )
