"""Running a planned (LIR) function on one arena: a single numpy byte buffer.

Every slot and view is a numpy array over the arena's bytes at its offset, so a
wrong plan really corrupts values (a plan that makes two live buffers share
bytes gives wrong results), and a right one shows that the plan suffices:

* inputs and parameters placed in the arena are copied into their slots; external
  ones (not allocated) are used as they are;
* each op runs its MIR kernel (`interpreters.run_kernel`, the same functions as the
  reference interpreter) on the arrays of its operands, and its results are copied
  into their slots; a view is not computed at all: it *is* the bytes of its root at
  its offset, which is what aliasing means;
* the outputs are copied out of their slots.

Region bodies (`mir.if`, `mir.while`) run outside the arena, on the reference
interpreter: the plan places the region op's operands and results, not the values
inside its regions. The arena starts filled with a poison byte pattern, so reading
a slot before it was written gives garbage rather than zeros.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.interpreter import Interpreter
from xdsl.ir import Operation, Region, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.dialects.lir.attrs import ExternalAttr, Placement, ViewAttr
from rlx_xdsl.dialects.lir.proof import read_plan
from rlx_xdsl.interpreters.engine import make_interpreter, run_kernel, run_region_on

POISON = 0xA5
"""The arena's initial bytes: f32 0xA5A5A5A5 is about -2.9e-16, f16 0xA5A5 about -0.022."""


class ArenaRunError(Exception):
    """Running `op` failed with `cause` (tools report it at the op)."""

    def __init__(self, op: Operation, cause: BaseException):
        super().__init__(str(cause))
        self.op = op
        self.cause = cause


def arena_array(arena: np.ndarray, placement: Placement, t: TensorType) -> np.ndarray:
    """The numpy view of `placement`'s bytes of `arena`, typed and shaped as `t`."""
    dtype = dtypes.numpy_dtype(t.element_type)
    return np.ndarray(tuple(t.get_shape()), dtype=dtype, buffer=arena, offset=placement.offset.data)


def _store(target: np.ndarray, value: np.ndarray, what: str) -> None:
    value = np.asarray(value)
    if value.shape != target.shape or value.dtype != target.dtype:
        raise ValueError(
            f"{what} is {value.dtype}{list(value.shape)}, but its slot holds {target.dtype}{list(target.shape)}"
        )
    np.copyto(target, value)


class ArenaRun:
    """One run of a planned function: the arena and the array of every value so far."""

    def __init__(self, module: ModuleOp, function: func.FuncOp):
        plan = plan_of(function)
        if plan is None:
            raise ValueError(f"@{function.sym_name.data} has no memory plan (run rlx-plan-memory)")
        self.module = module
        self.function = function
        self.planned = read_plan(plan)
        self.arena = np.full(plan.arena_bytes.value.data, POISON, dtype=np.uint8)
        self.values: dict[SSAValue, np.ndarray] = {}
        self._interpreter: Interpreter | None = None

    def bind(self, value: SSAValue, array: np.ndarray, what: str) -> None:
        """Give `value` its array: copied into its slot, or kept as it is when external."""
        placement = self.planned.placement(value)
        if isinstance(placement, ExternalAttr):
            self.values[value] = np.asarray(array)
            return
        target = arena_array(self.arena, placement, value.type)
        _store(target, array, what)
        self.values[value] = target

    def run_region(self, region: Region, values: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
        if self._interpreter is None:
            self._interpreter = make_interpreter(self.module)
        return run_region_on(self._interpreter, region, values, "lir-arena")

    def step(self, op: Operation) -> None:
        """Run one op: alias a view, or run its kernel and store its results."""
        if len(op.results) == 1 and isinstance(view := self.planned.placement(op.results[0]), ViewAttr):
            self.values[op.results[0]] = arena_array(self.arena, view, op.results[0].type)
            return
        results = run_kernel(op, [self.values[v] for v in op.operands], self.run_region)
        for index, (result, array) in enumerate(zip(op.results, results, strict=True)):
            self.bind(result, array, f"'{op.name}' result #{index}")

    def run(self, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        block = self.function.body.block
        if len(inputs) != len(block.args):
            raise ValueError(f"@{self.function.sym_name.data} takes {len(block.args)} arguments, got {len(inputs)}")
        for index, (arg, array) in enumerate(zip(block.args, inputs)):
            self.bind(arg, np.asarray(array), f"argument #{index}")
        for op in self.planned.schedule.ops:
            try:
                self.step(op)
            except Exception as e:
                raise ArenaRunError(op, e) from e
        terminator = block.last_op
        assert terminator is not None
        return [np.array(self.values[v]) for v in terminator.operands]


def run_planned(module: ModuleOp, function: func.FuncOp, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run the planned `function` on one arena; the outputs are copies out of it."""
    return ArenaRun(module, function).run(inputs)
