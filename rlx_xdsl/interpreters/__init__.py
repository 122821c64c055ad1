"""The numpy reference interpreter: the oracle every pass is checked against.

`run_function(module, name, inputs)` executes one `func.func` with xDSL's
interpreter, using the kernels registered by `interpreters.mir.*`.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from types import ModuleType

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter, InterpreterFunctions
from xdsl.interpreters.func import FuncFunctions

from rlx_xdsl.dialects.mir import GROUPS


def kernel_module(group: ModuleType) -> ModuleType:
    """The kernels of a dialect group: `interpreters.mir.<name>` for `dialects.mir.<name>`.

    Deriving them from `dialects.mir.GROUPS` keeps one list of groups; a group
    without a kernel module fails here, at import, rather than when its op runs.
    """
    name = group.__name__.rsplit(".", 1)[-1]
    return importlib.import_module(f"rlx_xdsl.interpreters.mir.{name}")


FUNCTION_SETS: list[type[InterpreterFunctions]] = [
    FuncFunctions,
    *(functions for group in GROUPS for functions in kernel_module(group).FUNCTIONS),
]


def make_interpreter(module: ModuleOp) -> Interpreter:
    interp = Interpreter(module)
    for functions in FUNCTION_SETS:
        interp.register_implementations(functions())
    return interp


def find_function(module: ModuleOp, name: str | None = None) -> func.FuncOp:
    """The function called `name`, or the module's only (or first) function."""
    funcs = [op for op in module.ops if isinstance(op, func.FuncOp)]
    if name is None:
        if not funcs:
            raise KeyError("the module contains no func.func")
        return funcs[0]
    for f in funcs:
        if f.sym_name.data == name:
            return f
    raise KeyError(f"no function named '{name}'")


def run_function(
    module: ModuleOp, name: str | None, inputs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """Run one function on numpy inputs and return its outputs."""
    f = find_function(module, name)
    interp = make_interpreter(module)
    outputs = interp.call_op(f, tuple(np.asarray(x) for x in inputs))
    return [np.asarray(o) for o in outputs]
