"""The numpy reference interpreter: the oracle every pass is checked against.

Kernels are plain functions `kernel(op, *arrays) -> tuple[arrays]` registered by
op class in `KERNELS` (each dialect group contributes its table), so anything
can call them directly: the xDSL interpreter built here, the LIR arena executor,
constant folding, differential tests. `run_function(module, name, inputs)`
executes one `func.func` with xDSL's `Interpreter`, whose op implementations are
derived from `KERNELS` (or, for a function with a memory plan, on its arena).

Another dialect's kernels join with `KERNELS.add(MyOp, my_kernel)`; a
terminator that hands its operands back to its region op joins with
`YIELDS.append(MyYieldOp)`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)
from xdsl.interpreters.func import FuncFunctions
from xdsl.ir import Operation, Region
from xdsl.traits import SymbolTable

from rlx_xdsl.interpreters import hir, mir
from rlx_xdsl.interpreters.common import Kernel
from rlx_xdsl.registry import OpRegistry

KERNELS: OpRegistry[Kernel] = OpRegistry("interpreter kernel")
for _group in (*mir.GROUPS, *hir.GROUPS):
    for _op_class, _kernel in _group.KERNELS.items():
        KERNELS.add(_op_class, _kernel)

YIELDS: list[type[Operation]] = [y for group in mir.GROUPS for y in getattr(group, "YIELDS", ())]
"""Terminators whose operands are the values their region yields."""


def run_kernel(op: Operation, args: Sequence[np.ndarray], run_region=None) -> tuple[np.ndarray, ...]:
    """Call `op`'s kernel on `args` (and `run_region` for ops with regions)."""
    kernel = KERNELS[op]
    if op.regions:
        return tuple(kernel(op, *args, run_region=run_region))
    return tuple(kernel(op, *args))


def _derived_functions() -> InterpreterFunctions:
    """xDSL interpreter implementations for every op in `KERNELS` and `YIELDS`."""

    def run(self, interp: Interpreter, op: Operation, args: tuple):
        def run_region(region: Region, values: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
            return tuple(interp.run_ssacfg_region(region, tuple(values), op.name))

        return run_kernel(op, args, run_region)

    def yield_values(self, interp: Interpreter, op: Operation, args: tuple):
        return ReturnedValues(args), ()

    methods = {f"run_{i}": impl(op_class)(run) for i, op_class in enumerate(KERNELS)}
    methods |= {f"yield_{i}": impl_terminator(op_class)(yield_values) for i, op_class in enumerate(YIELDS)}
    return register_impls(type("KernelFunctions", (InterpreterFunctions,), methods))()


_FUNCTIONS: tuple[int, InterpreterFunctions] | None = None


def kernel_functions() -> InterpreterFunctions:
    """The derived implementations, rebuilt when kernels were registered since."""
    global _FUNCTIONS
    version = len(KERNELS) + len(YIELDS)
    if _FUNCTIONS is None or _FUNCTIONS[0] != version:
        _FUNCTIONS = (version, _derived_functions())
    return _FUNCTIONS[1]


def make_interpreter(module: ModuleOp) -> Interpreter:
    interp = Interpreter(module)
    interp.register_implementations(FuncFunctions())
    interp.register_implementations(kernel_functions())
    return interp


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called `name`, or the module's first function."""
    if name is None:
        first = next((op for op in module.ops if isinstance(op, func.FuncOp)), None)
        if first is None:
            raise KeyError("the module contains no func.func")
        return first
    found = SymbolTable.lookup_symbol(module, name)
    if not isinstance(found, func.FuncOp):
        raise KeyError(f"no function named '{name}'")
    return found


def run_function(module: ModuleOp, name: str | None, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run one function on numpy inputs and return its outputs.

    A planned (LIR) function runs on its arena (`interpreters.lir`), with the same kernels.
    """
    from rlx_xdsl.dialects.lir import plan_of

    f = find_function(module, name)
    if plan_of(f) is not None:
        from rlx_xdsl.interpreters.lir import run_planned

        return run_planned(module, f, inputs)
    interp = make_interpreter(module)
    outputs = interp.call_op(f, tuple(np.asarray(x) for x in inputs))
    return [np.asarray(o) for o in outputs]
