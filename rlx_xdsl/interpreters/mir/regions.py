"""numpy semantics of MIR region control flow: `mir.if`, `mir.while`, `mir.yield`.

Regions run through `Interpreter.run_ssacfg_region` with the captures (or the
carried values) as block arguments; `mir.yield` returns its operands to the
parent op, as `scf.yield` does in xDSL's own `scf` interpreter.
"""

from __future__ import annotations

import itertools

import numpy as np
from xdsl.interpreter import (
    Interpreter,
    InterpreterFunctions,
    ReturnedValues,
    impl,
    impl_terminator,
    register_impls,
)

from rlx_xdsl.dialects.mir import regions as cf


def predicate_holds(value: np.ndarray) -> bool:
    """A one-element predicate is true when its element is nonzero (i1 or numeric)."""
    array = np.asarray(value)
    if array.size != 1:
        raise ValueError(f"a predicate must have exactly one element, got shape {array.shape}")
    return bool(array.reshape(()) != 0)


@register_impls
class ControlFlowFunctions(InterpreterFunctions):
    @impl(cf.IfOp)
    def run_if(self, interp: Interpreter, op: cf.IfOp, args: tuple):
        pred, *captures = args
        region = op.then_region if predicate_holds(pred) else op.else_region
        return interp.run_ssacfg_region(region, tuple(captures), "mir.if")

    @impl(cf.WhileOp)
    def run_while(self, interp: Interpreter, op: cf.WhileOp, args: tuple):
        carried = tuple(args)
        limit = op.iteration_limit
        iterations = itertools.count() if limit is None else range(limit)
        for _ in iterations:
            (cond,) = interp.run_ssacfg_region(op.cond_region, carried, "mir.while.cond")
            if not predicate_holds(cond):
                break
            carried = tuple(interp.run_ssacfg_region(op.body_region, carried, "mir.while.body"))
        return carried

    @impl_terminator(cf.YieldOp)
    def run_yield(self, interp: Interpreter, op: cf.YieldOp, args: tuple):
        return ReturnedValues(args), ()


FUNCTIONS = [ControlFlowFunctions]
