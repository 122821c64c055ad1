"""Live ranges of a function's buffers: the facts a memory plan is made from and checked against.

The schedule is the program order (RLX: insertion order). Step 0 is the function
entry, where the arguments arrive; the top-level ops are steps 1..N; step N+1
(`end`) is the `func.return`, which reads the outputs. An op nested in a region
(a `mir.while` body) reads its values at the step of the top-level op holding it.

Every value gets a *role*: a BUFFER of its own, a VIEW aliasing its root buffer
(an op with the `ViewOf` trait, followed through chains of views), or EXTERNAL
(not in the arena). The planner chooses roles from the traits and its options;
the verifier reads them from the placements. From the roles follow, as in RLX:

* a buffer is born at its op's step and dies at the last step that reads it or
  any view of it (its own step if nothing does);
* inputs, parameters and constants live over the whole schedule `[0, end]`, so
  their bytes are never reused (RLX's rule: they are loaded once, in the prologue);
* outputs live until `end`.

Two buffers may share bytes only when their live ranges do not overlap, with one
exception RLX does not make: an op with the `WritesInPlace` trait may write its
result over an operand buffer whose last read is that op (`in_place_roots`).

The lower bound (`lower_bound_bytes`) is the most bytes that must coexist at one
step: the buffers live at that step, minus the result that may be written in place
(each buffer counted at its size rounded up to the alignment, which is what a
slot at an aligned offset occupies). No valid plan has a smaller arena.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.traits import ConstantLike, IsTerminator
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.lir.attrs import Phase
from rlx_xdsl.dialects.traits import (
    Precision,
    in_place_operands,
    is_sampling,
    precision_class,
    view_offset,
    view_source,
)
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import is_param
from rlx_xdsl.shapes import is_static


class PlanError(OpError, VerifyException):
    """A memory plan (or a function to plan) that is wrong at `op`.

    It is a `VerifyException`, so the verifier of `lir.plan` can raise it, and an
    `OpError`, so that tools report it at `op` (the value concerned) rather than at
    the `lir.plan` op whose verifier found it.
    """


class Kind(Enum):
    """Where a value comes from."""

    INPUT = "input"
    PARAM = "param"
    CONSTANT = "constant"
    RESULT = "result"

    @property
    def lives_throughout(self) -> bool:
        """Inputs, parameters and constants live over the whole schedule (RLX)."""
        return self is not Kind.RESULT


class Role(Enum):
    """How a value is stored."""

    BUFFER = "buffer"
    VIEW = "view"
    EXTERNAL = "external"


@dataclass
class ValueFacts:
    """What the IR says about one value, before any plan."""

    value: SSAValue
    index: int
    step: int
    """The step that defines it (0 for arguments)."""
    kind: Kind
    nbytes: int
    op: Operation | None
    """The defining op; None for arguments."""
    view_of: int | None
    """The value it can alias (a `ViewOf` op's operand 0), or None."""
    view_bytes: int
    """The byte offset of that alias within the value it aliases."""
    last_read: int
    """The last step that reads the value itself (its own step if none does)."""


def _element_bytes(t: TensorType) -> int:
    return dtypes.dtype_of(t.element_type).nbytes


def tensor_bytes(t: TensorType) -> int:
    return math.prod(t.get_shape()) * _element_bytes(t)


def align_up(n: int, alignment: int) -> int:
    return -(-n // alignment) * alignment


def defining_site(value: SSAValue) -> Operation:
    """The op to point at for `value`: its defining op, or the function of an argument."""
    if isinstance(value, BlockArgument):
        parent = value.owner.parent_op()
        assert parent is not None
        return parent
    return value.owner


@dataclass
class Schedule:
    """The steps of one function and the facts about each of its top-level values."""

    function: func.FuncOp
    ops: list[Operation]
    """The top-level ops in program order; op `ops[i]` runs at step `i + 1`."""
    steps: dict[Operation, int]
    end: int
    values: list[ValueFacts]
    index: dict[SSAValue, int]
    outputs: list[int]
    """The values `func.return` hands back, in order."""

    def step_of(self, op: Operation) -> int:
        return self.steps[op]

    @staticmethod
    def of(function: func.FuncOp, skip: Callable[[Operation], bool] = lambda op: False) -> Schedule:
        """Analyse `function` (`skip` names ops that are not steps: the plan op itself).

        Raises `PlanError` at the first value that is not a statically shaped tensor.
        """
        block = function.body.block
        terminator = block.last_op if block.last_op is not None and block.last_op.has_trait(IsTerminator) else None
        ops = [op for op in block.ops if op is not terminator and not skip(op)]
        schedule = Schedule(function, ops, {op: i + 1 for i, op in enumerate(ops)}, len(ops) + 1, [], {}, [])
        for position, arg in enumerate(block.args):
            schedule._add(arg, 0, Kind.PARAM if is_param(function, position) else Kind.INPUT, None)
        for op in ops:
            kind = Kind.CONSTANT if op.has_trait(ConstantLike) else Kind.RESULT
            for result in op.results:
                schedule._add(result, schedule.steps[op], kind, op)
        if terminator is not None:
            schedule.outputs = [schedule.index[v] for v in terminator.operands]
        for facts in schedule.values:
            for use in facts.value.uses:
                reader = block.find_ancestor_op_in_block(use.operation)
                step = schedule.end if reader is terminator else schedule.steps.get(reader)
                if step is not None and step > facts.last_read:
                    facts.last_read = step
        return schedule

    def _add(self, value: SSAValue, step: int, kind: Kind, op: Operation | None) -> None:
        t = value.type
        site = defining_site(value)
        if not isinstance(t, TensorType):
            raise PlanError(site, f"'{site.name}' {_what(value)} has type {t}: memory plans hold tensors only")
        if not is_static(t.get_shape()):
            raise PlanError(
                site,
                f"'{site.name}' {_what(value)} has dynamic type {t}: memory planning needs static "
                "shapes; bind them first with rlx-specialize{shapes=NAME=DIMS,...}",
            )
        source = view_source(op) if op is not None else None
        aliased = self.index.get(source) if source is not None else None
        facts = ValueFacts(
            value=value,
            index=len(self.values),
            step=step,
            kind=kind,
            nbytes=tensor_bytes(t),
            op=op,
            view_of=aliased,
            view_bytes=view_offset(op) * _element_bytes(source.type) if aliased is not None else 0,
            last_read=step,
        )
        self.index[value] = facts.index
        self.values.append(facts)


def _what(value: SSAValue) -> str:
    if isinstance(value, BlockArgument):
        return f"argument #{value.index}"
    return "result" if len(value.owner.results) == 1 else f"result #{value.index}"


# Roles -> buffers and live ranges --------------------------------------------------------


@dataclass
class Layout:
    """Buffers and live ranges that follow from a schedule and a role for each value."""

    schedule: Schedule
    roles: list[Role]
    root: list[int]
    """The buffer each value's bytes belong to (itself for buffers and external values)."""
    byte_offset: list[int]
    """The byte offset of each value within its root."""
    birth: list[int]
    death: list[int]
    """Live range `[birth, death]` of each buffer (meaningful for roots only)."""
    in_place: dict[int, list[int]]
    """For each result that may be written in place: the dying root buffers it may overwrite."""

    @property
    def buffers(self) -> list[int]:
        """The values with bytes of their own in the arena."""
        return [i for i, role in enumerate(self.roles) if role is Role.BUFFER]

    @staticmethod
    def of(schedule: Schedule, roles: Sequence[Role]) -> Layout:
        """Roots, offsets, live ranges and in-place candidates for `roles`.

        A VIEW must be a value that can alias (`view_of` is set) whose source is not
        EXTERNAL; callers check that first (the planner by construction, the
        verifier with a located error).
        """
        n = len(schedule.values)
        root = list(range(n))
        offset = [0] * n
        for facts in schedule.values:
            if roles[facts.index] is Role.VIEW:
                assert facts.view_of is not None, "a view needs a value to alias"
                root[facts.index] = root[facts.view_of]
                offset[facts.index] = offset[facts.view_of] + facts.view_bytes
        birth = [facts.step for facts in schedule.values]
        death = [facts.last_read for facts in schedule.values]
        for facts in schedule.values:
            r = root[facts.index]
            if facts.last_read > death[r]:
                death[r] = facts.last_read
        for facts in schedule.values:
            if facts.kind.lives_throughout:
                birth[facts.index], death[facts.index] = 0, schedule.end
        layout = Layout(schedule, list(roles), root, offset, birth, death, {})
        layout.in_place = _in_place_candidates(layout)
        return layout


def _in_place_candidates(layout: Layout) -> dict[int, list[int]]:
    """Results an op may write over an operand buffer that dies at that op.

    The operand must be a whole buffer (its root, or a view covering all of it at
    offset 0) that is live only until this step, and any other operand reading the
    same buffer must read exactly the same elements: then element i of the result
    overwrites only element i of the inputs, after it was read.
    """
    schedule, roles = layout.schedule, layout.roles
    candidates: dict[int, list[int]] = {}
    for op in schedule.ops:
        if len(op.results) != 1:
            continue
        result = schedule.index[op.results[0]]
        if roles[result] is not Role.BUFFER:
            continue
        step = schedule.step_of(op)
        operands = [schedule.index[v] for v in op.operands]
        found: list[int] = []
        for position in in_place_operands(op):
            j = operands[position]
            r = layout.root[j]
            ok = (
                roles[r] is Role.BUFFER
                and not schedule.values[r].kind.lives_throughout
                and layout.death[r] == step
                and layout.byte_offset[j] == 0
                and schedule.values[j].nbytes == schedule.values[r].nbytes
                and all(
                    layout.byte_offset[k] == 0 and op.operands[p].type == op.operands[position].type
                    for p, k in enumerate(operands)
                    if layout.root[k] == r
                )
            )
            if ok and r not in found:
                found.append(r)
        if found:
            candidates[result] = found
    return candidates


# Plan figures --------------------------------------------------------------------------


def naive_bytes(layout: Layout, alignment: int) -> int:
    """Every buffer in a slot of its own: the arena without any reuse."""
    return sum(align_up(layout.schedule.values[i].nbytes, alignment) for i in layout.buffers)


def live_bytes(layout: Layout, alignment: int) -> list[int]:
    """The bytes that must coexist at each step 0..end (in-place results share their operand's)."""
    diff = [0] * (layout.schedule.end + 2)
    for i in layout.buffers:
        size = align_up(layout.schedule.values[i].nbytes, alignment)
        start = layout.birth[i] + (1 if i in layout.in_place else 0)
        if size and start <= layout.death[i]:
            diff[start] += size
            diff[layout.death[i] + 1] -= size
    profile, running = [], 0
    for delta in diff[:-1]:
        running += delta
        profile.append(running)
    return profile


def lower_bound_bytes(layout: Layout, alignment: int) -> int:
    """The most bytes live at one step: no plan with aligned slots can use fewer."""
    return max(live_bytes(layout, alignment), default=0)


# Phases ------------------------------------------------------------------------------


def _is_compute(op: Operation) -> bool:
    """A compute op (matmul, conv, attention...), or a region op whose body holds one."""
    if precision_class(op) is Precision.COMPUTE:
        return True
    return any(_is_compute(inner) for region in op.regions for block in region.blocks for inner in block.ops)


def derive_phases(schedule: Schedule) -> list[Phase]:
    """The phase of each op of `schedule.ops` (RLX's `derive_phases`).

    Constants load in the prologue and sampling ops (`mir.topk`) end the step in
    the epilogue; any other op is in the epilogue when it comes after the last
    compute op or after the last sampling op, and in the steady state otherwise.
    """
    last_compute = max((i for i, op in enumerate(schedule.ops) if _is_compute(op)), default=None)
    last_sample = max((i for i, op in enumerate(schedule.ops) if is_sampling(op)), default=None)
    phases = []
    for i, op in enumerate(schedule.ops):
        if op.has_trait(ConstantLike):
            phases.append(Phase.PROLOGUE)
        elif is_sampling(op):
            phases.append(Phase.EPILOGUE)
        elif (last_compute is not None and i > last_compute) or (last_sample is not None and i > last_sample):
            phases.append(Phase.EPILOGUE)
        else:
            phases.append(Phase.STEADY)
    return phases
