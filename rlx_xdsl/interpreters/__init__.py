"""The numpy reference interpreter: the oracle every pass is checked against.

`run_function(module, name, inputs)` executes one `func.func` with xDSL's
interpreter, using the kernels registered by `interpreters.mir.*`.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.interpreter import Interpreter
from xdsl.interpreters.func import FuncFunctions

from rlx_xdsl.interpreters.mir import (
    attention,
    control_flow,
    conv,
    elementwise,
    indexing,
    linalg,
    loss,
    norm,
    reduction,
    shape,
)

FUNCTION_SETS = [
    FuncFunctions,
    *elementwise.FUNCTIONS,
    *linalg.FUNCTIONS,
    *shape.FUNCTIONS,
    *indexing.FUNCTIONS,
    *reduction.FUNCTIONS,
    *norm.FUNCTIONS,
    *attention.FUNCTIONS,
    *conv.FUNCTIONS,
    *loss.FUNCTIONS,
    *control_flow.FUNCTIONS,
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
