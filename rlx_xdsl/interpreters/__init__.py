"""The numpy reference interpreter: the oracle every pass is checked against.

Kernels are plain functions `kernel(op, *arrays) -> tuple[arrays]` registered by
op class in `KERNELS` (each dialect group contributes its table), so anything
can call them directly: the xDSL interpreter built here, the LIR arena executor,
constant folding, differential tests. `interpret_function(module, name, inputs)`
executes one `func.func` with xDSL's `Interpreter`, whose op implementations are
derived from `KERNELS` (or, for a function with a memory plan, on its arena).
Running a function on a compiled backend as well is `rlx_xdsl.run.run_function`.

Another dialect's kernels join with `KERNELS.add(MyOp, my_kernel)`; a
terminator that hands its operands back to its region op joins with
`YIELDS.append(MyYieldOp)`. The engine (kernel table, checked kernel calls, the
derived xDSL interpreter) is `engine.py`; this package re-exports it.
"""

from __future__ import annotations

import importlib
import warnings
from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.interpreters import checks
from rlx_xdsl.interpreters.engine import (
    KERNELS,
    YIELDS,
    call_function,
    kernel_functions,
    make_interpreter,
    quiet_numpy,
    run_kernel,
    run_region_on,
)
from rlx_xdsl.interpreters.lir import run_planned
from rlx_xdsl.ir.graph import find_function, inputs_by_name

__all__ = [
    "KERNELS",
    "YIELDS",
    "call_function",
    "find_function",
    "interpret_function",
    "kernel_functions",
    "make_interpreter",
    "quiet_numpy",
    "run_kernel",
    "run_region_on",
]


def interpret_function(
    module: ModuleOp, name: str | None, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> list[np.ndarray]:
    """Run one function of `module` on numpy inputs with the reference kernels; its outputs.

    `inputs` are by position, or a mapping by argument name (`rlx.name`, `argN` or the
    SSA name; see `graph.inputs_by_name`: a missing or unknown name is a `KeyError`).

    A planned (LIR) function runs on its arena (`interpreters.lir`), with the same kernels.
    Raises `KeyError` for a missing function and `KernelError` naming the op whose kernel
    rejected its inputs.
    """
    f = find_function(module, name)
    if isinstance(inputs, Mapping):
        inputs = inputs_by_name(f, inputs)
    arrays = tuple(np.asarray(x) for x in inputs)
    checks.check_arguments(f, arrays)
    if plan_of(f) is not None:
        return run_planned(module, f, arrays)
    interp = make_interpreter(module)
    outputs = call_function(interp, f, arrays)
    return [np.asarray(o) for o in outputs]


def __getattr__(name: str):
    # Deprecated re-export, kept for one release: `run_function` moved to `rlx_xdsl.run`
    # (it dispatches to the backends, which sit above this package). Imported by name,
    # lazily, so this package imports nothing above it.
    if name == "run_function":
        warnings.warn(
            "rlx_xdsl.interpreters.run_function moved to rlx_xdsl.run.run_function",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module("rlx_xdsl.run").run_function
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
