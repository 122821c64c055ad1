"""numpy semantics of MIR region ops: `mir.if`, `mir.while` (and their `mir.yield`).

A region op's kernel receives `run_region(region, values)`, which executes the
region's single block with `values` as its arguments and returns what its
`mir.yield` hands back; the xDSL interpreter and the LIR executor each supply
their own runner.
"""

from __future__ import annotations

import itertools

import numpy as np

from rlx_xdsl.dialects.mir import regions as rg
from rlx_xdsl.interpreters.common import KernelError, RegionRunner


def predicate_holds(value: np.ndarray) -> bool:
    """A one-element predicate is true when its element is nonzero (i1 or numeric)."""
    array = np.asarray(value)
    if array.size != 1:
        raise KernelError(f"a predicate must have exactly one element, got shape {list(array.shape)}")
    return bool(array.reshape(()) != 0)


def run_if(op: rg.IfOp, pred: np.ndarray, *captures: np.ndarray, run_region: RegionRunner) -> tuple[np.ndarray, ...]:
    region = op.then_region if predicate_holds(pred) else op.else_region
    return run_region(region, captures)


def run_while(op: rg.WhileOp, *init: np.ndarray, run_region: RegionRunner) -> tuple[np.ndarray, ...]:
    carried = tuple(init)
    limit = op.iteration_limit
    for _ in itertools.count() if limit is None else range(limit):
        (cond,) = run_region(op.cond_region, carried)
        if not predicate_holds(cond):
            break
        carried = tuple(run_region(op.body_region, carried))
    return carried


KERNELS = {rg.IfOp: run_if, rg.WhileOp: run_while}

YIELDS = (rg.YieldOp,)
"""Terminators that hand their operands back to the region's op."""
