"""The interpreter's engine: the kernel table, checked kernel calls, and xDSL's
`Interpreter` with op implementations derived from the kernels.

`KERNELS` gathers the `KERNELS` tables of the MIR and HIR group modules (loaded by name
through `layers.load`, so no group module imports this one). `run_kernel` is the one door
to a kernel: for `?` dims it re-runs the op's type inference on the run-time shapes before
computing, checks the results after (`checks.py`), keeps numpy's warnings off stderr, and
names the op in every `KernelError`.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_callable,
    impl_terminator,
    register_impls,
)
from xdsl.ir import Operation, Region

from rlx_xdsl import layers
from rlx_xdsl.interpreters import checks
from rlx_xdsl.interpreters.common import Kernel, KernelError
from rlx_xdsl.registry import OpRegistry

KERNELS: OpRegistry[Kernel] = OpRegistry("interpreter kernel")
# The kernel tables of the MIR and HIR groups (the group modules never import this one).
_GROUPS = (*layers.load("mir-kernels"), *layers.load("hir-kernels"))
for _group in _GROUPS:
    for _op_class, _kernel in _group.KERNELS.items():
        KERNELS.add(_op_class, _kernel)

YIELDS: list[type[Operation]] = [y for group in _GROUPS for y in getattr(group, "YIELDS", ())]
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


@register_impls
class FuncFunctions(InterpreterFunctions):
    """`func.func`, `func.call` and `func.return`, as `xdsl.interpreters.func` runs them.

    Written here because importing any `xdsl.interpreters.*` module first imports that
    package's `__init__`, which loads every xDSL interpreter (RISC-V, Snitch, ...): about
    0.3 s of every `rlx-run` start and of every process that interprets IR.
    """

    @impl_terminator(func.ReturnOp)
    def run_return(self, interp: Interpreter, op: func.ReturnOp, args: tuple):
        return ReturnedValues(args), ()

    @impl(func.CallOp)
    def run_call(self, interp: Interpreter, op: func.CallOp, args: tuple):
        return interp.call_op(op.callee, args)

    @impl_callable(func.FuncOp)
    def call_func(self, interp: Interpreter, op: func.FuncOp, args: tuple):
        if (first_block := op.body.blocks.first) is None or not first_block.ops:
            return interp.call_external(op.sym_name.data, op, args)
        return interp.run_ssacfg_region(op.body, args, op.sym_name.data)


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
