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

`run_kernel` is the one door to a kernel: for `?` dims it re-runs the op's type
inference on the run-time shapes before computing, checks the results after
(`checks.py`), keeps numpy's warnings off stderr, and names the op in every
`KernelError`. (Operands need no check: each is a checked result, a checked
function argument, or a region argument taken from checked operands.)
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager

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

from rlx_xdsl.interpreters import checks, hir, mir
from rlx_xdsl.interpreters.common import Kernel, KernelError
from rlx_xdsl.registry import OpRegistry

KERNELS: OpRegistry[Kernel] = OpRegistry("interpreter kernel")
for _group in (*mir.GROUPS, *hir.GROUPS):
    for _op_class, _kernel in _group.KERNELS.items():
        KERNELS.add(_op_class, _kernel)

YIELDS: list[type[Operation]] = [y for group in mir.GROUPS for y in getattr(group, "YIELDS", ())]
"""Terminators whose operands are the values their region yields."""


_QUIET = [0]
"""How many `quiet_numpy` blocks are active (warning filters are set up only once)."""


@contextmanager
def quiet_numpy() -> Iterator[None]:
    """No numpy floating-point warning reaches stderr inside the block: IEEE results
    (NaN, inf) are the interpreter's documented semantics, not warnings."""
    if _QUIET[0]:
        yield
        return
    _QUIET[0] += 1
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            warnings.simplefilter("ignore", np.exceptions.ComplexWarning)
            yield
    finally:
        _QUIET[0] -= 1


def run_kernel(op: Operation, args: Sequence[np.ndarray], run_region=None) -> tuple[np.ndarray, ...]:
    """Call `op`'s kernel on `args` (and `run_region` for ops with regions), checked.

    Raises `KernelError` (message starting with the quoted op name) when the
    operands or results contradict the op's types, when a result would not fit in
    memory, or when the kernel rejects its inputs.
    """
    kernel = KERNELS[op]
    expected = checks.expected_results(op, args)
    checks.check_memory(op, expected)
    try:
        with quiet_numpy():
            if op.regions:
                results = tuple(kernel(op, *args, run_region=run_region))
            else:
                results = tuple(kernel(op, *args))
    except KernelError as e:
        if e.op is not None:  # raised (and named) by an op inside a region
            raise
        raise KernelError(f"'{op.name}' {e.message}", op) from None
    except MemoryError:
        raise KernelError(f"'{op.name}' ran out of memory computing its results", op) from None
    checks.check_results(op, expected, results)
    return results


class _Failed(BaseException):
    """Carries a kernel's exception out of xDSL's interpreter, which would otherwise
    print the whole module into it at every level of region nesting."""

    def __init__(self, error: Exception):
        super().__init__()
        self.error = error


def call_function(interp: Interpreter, f: func.FuncOp, args: Sequence[np.ndarray]) -> tuple:
    """`interp.call_op(f, args)`, re-raising a kernel's failure as itself."""
    try:
        with quiet_numpy():  # once for the whole run, not per kernel
            return interp.call_op(f, tuple(args))
    except _Failed as failed:
        raise failed.error from None


def run_region_on(interp: Interpreter, region: Region, values: Sequence[np.ndarray], name: str) -> tuple:
    """`interp.run_ssacfg_region(region, values)` for callers outside `call_function`
    (the LIR arena executor): a kernel's failure is re-raised as itself."""
    try:
        with quiet_numpy():
            return tuple(interp.run_ssacfg_region(region, tuple(values), name))
    except _Failed as failed:
        raise failed.error from None


def _derived_functions() -> InterpreterFunctions:
    """xDSL interpreter implementations for every op in `KERNELS` and `YIELDS`."""

    def run(self, interp: Interpreter, op: Operation, args: tuple):
        def run_region(region: Region, values: Sequence[np.ndarray]) -> tuple[np.ndarray, ...]:
            return tuple(interp.run_ssacfg_region(region, tuple(values), op.name))

        try:
            return run_kernel(op, args, run_region)
        except Exception as e:
            raise _Failed(e) from None

    def yield_values(self, interp: Interpreter, op: Operation, args: tuple):
        return ReturnedValues(args), ()

    methods = {f"run_{i}": impl(op_class)(run) for i, op_class in enumerate(KERNELS)}
    methods |= {f"yield_{i}": impl_terminator(op_class)(yield_values) for i, op_class in enumerate(YIELDS)}
    return register_impls(type("KernelFunctions", (InterpreterFunctions,), methods))()


_FUNCTIONS: tuple[tuple[int, int], InterpreterFunctions] | None = None


def kernel_functions() -> InterpreterFunctions:
    """The derived implementations, rebuilt when kernels were registered since."""
    global _FUNCTIONS
    version = (KERNELS.version, len(YIELDS))
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


def run_function(
    module: ModuleOp,
    name: str | None,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    backend: str = "interpreter",
    device: str = "cpu",
) -> list[np.ndarray]:
    """Run one function on numpy inputs and return its outputs.

    `inputs` are by position, or a mapping by argument name (`rlx.name`, `argN` or the
    SSA name; see `graph.inputs_by_name`: a missing or unknown name is a `KeyError`).

    A planned (LIR) function runs on its arena (`interpreters.lir`), with the same kernels.
    `backend="iree"` lowers the module to upstream MLIR and runs it compiled by IREE on
    `device` ("cpu" or "cuda"; see `rlx_xdsl.backends.iree`); `backend="xla"` runs it
    compiled by XLA on `device` ("cpu" or "gpu"; see `rlx_xdsl.backends.xla`).
    """
    from rlx_xdsl.dialects.lir import plan_of
    from rlx_xdsl.graph import inputs_by_name

    if isinstance(inputs, Mapping):
        inputs = inputs_by_name(find_function(module, name), inputs)
    if backend == "iree":
        from rlx_xdsl.backends import iree

        return iree.run_function(module, name, inputs, device)
    if backend == "xla":
        from rlx_xdsl.backends import xla

        return xla.run_function(module, name, inputs, device)
    if backend != "interpreter":
        raise ValueError(f"unknown backend '{backend}' (known: interpreter, iree, xla)")
    f = find_function(module, name)
    arrays = tuple(np.asarray(x) for x in inputs)
    checks.check_arguments(f, arrays)
    if plan_of(f) is not None:
        from rlx_xdsl.interpreters.lir import run_planned

        return run_planned(module, f, arrays)
    interp = make_interpreter(module)
    outputs = call_function(interp, f, arrays)
    return [np.asarray(o) for o in outputs]
