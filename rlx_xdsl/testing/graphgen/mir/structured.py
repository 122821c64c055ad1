"""Recipes of the structured MIR ops: scans, custom functions and the state-space recurrences.

Region bodies follow the rule of the `mir.if`/`mir.while` recipes (`graphgen.mir.regions`):
each yielded value is computed from one block argument through ops that keep its type,
so yielded types stay equal to the types the op requires even after dims are made `?`.
Scan bodies also read their bcasts and step slices: a float carry adds the sum of
another argument of its dtype, a rank-0 value that broadcasts without changing any
shape. Scans run 1-4 steps; `mir.scan_backward` gets random (not derived) trajectories,
upstream gradients and a vjp body of the right signature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
from hypothesis import strategies as st
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.dialects.mir.reduction import ReduceOp
from rlx_xdsl.dialects.mir.structured import (
    CustomFnOp,
    GatedDeltaNetOp,
    ScanBackwardOp,
    ScanOp,
    SelectiveScanOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.mir.regions import (
    elementwise_chain,
    region_body,
    region_emit,
)
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import Emit, GraphState
from rlx_xdsl.testing.graphgen.values import (
    anything,
    element_type,
    floats_of_rank,
    is_float,
    is_numeric,
    rank,
    shape_of,
)

MAX_STEPS = 4


def _float_type(s: GraphState, like: Sequence[SSAValue]):
    """The dtype of a float value among `like`, else f32: what new xs are made of."""
    floats = [element_type(v) for v in like if is_float(v)]
    return s.choice(floats) if floats else "f32"


def _stacked(s: GraphState, rows: int, like: SSAValue | None = None, dtype=None) -> SSAValue:
    """A new `[rows, *shape]` operand: `like`'s shape and dtype, or a random small one."""
    shape = shape_of(like) if like is not None else s.shape(0, 2)
    return s.operand((rows, *shape), element_type(like) if like is not None else dtype)


def _summary(emit: Emit, v: SSAValue) -> SSAValue:
    """`v` summed to rank 0 (v itself when it is rank 0)."""
    if rank(v) == 0:
        return v
    return emit(ReduceOp, v, kind="sum", axes=list(range(rank(v))))


def _mixing_body(s: GraphState, n_carries: int, yields: int) -> Callable[..., tuple[SSAValue, ...]]:
    """Yield `chain(args[i])` for the first `yields` args; a float one may add the sum of a
    later argument of the same dtype (a bcast or a step slice)."""

    def build(rb: GraphBuilder, *args: SSAValue) -> tuple[SSAValue, ...]:
        emit = region_emit(rb)
        values = []
        for i in range(yields):
            value = elementwise_chain(s, emit, args[i])
            others = [a for a in args[n_carries:] if is_float(a) and element_type(a) == element_type(value)]
            if is_float(value) and others and s.flag():
                value = emit(AddOp, value, _summary(emit, s.choice(others)))
            values.append(value)
        return tuple(values)

    return build


@RECIPES.register(ScanOp)
def scan(s: GraphState, op: OpClass) -> None:
    """1-2 carries, 0-1 bcasts and 0-2 xs; final carries or (checkpointed) trajectories."""
    carries = s.need_several(is_numeric, 2)
    length = s.integer(1, MAX_STEPS)
    bcasts = s.need_several(anything, 1) if s.flag() else []
    xs = [_stacked(s, length, dtype=_float_type(s, carries)) for _ in range(s.integer(0, 2))]
    body = _mixing_body(s, len(carries), len(carries))
    checkpoints = s.integer(1, length) if s.flag() else None
    result = s.builder.scan(
        carries, body, length, bcasts=bcasts, xs=xs, save_trajectory=s.flag(), num_checkpoints=checkpoints
    )
    s.produce(result)


@RECIPES.register(ScanBackwardOp)
def scan_backward(s: GraphState, op: OpClass) -> None:
    """A sweep over random trajectories; a forward body exactly when checkpoints skip steps."""
    carries = s.need_several(is_numeric, 2)
    length = s.integer(1, MAX_STEPS)
    checkpoints = s.integer(1, length) if s.flag() else None
    rows = checkpoints if checkpoints is not None else length
    save = s.flag()
    trajectory = [_stacked(s, rows, c) for c in carries]
    upstream = [_stacked(s, rows, c) if save else s.operand(shape_of(c), element_type(c)) for c in carries]
    xs = [_stacked(s, length, dtype=_float_type(s, carries)) for _ in range(s.integer(0, 2))]
    n = len(carries)
    vjp = region_body(s, [*range(n + len(xs), 2 * n + len(xs)), *range(n, n + len(xs))])
    forward = _mixing_body(s, n, n) if checkpoints is not None and checkpoints < length else None
    result = s.builder.scan_backward(
        carries, trajectory, upstream, vjp, length,
        xs=xs, save_trajectory=save, num_checkpoints=checkpoints, forward=forward,
    )  # fmt: skip
    s.produce(result)


@RECIPES.register(CustomFnOp)
def custom_fn(s: GraphState, op: OpClass) -> None:
    """0-3 inputs, 1-3 results from them (or one from a constant), optional vjp and jvp bodies."""
    inputs = s.need_several(anything, 3) if s.flag() else []
    if inputs:
        sources = s.draw(st.lists(st.integers(0, len(inputs) - 1), min_size=1, max_size=3))
        forward = region_body(s, sources)
    else:
        sources = [0]

        def forward(rb: GraphBuilder) -> SSAValue:
            return rb.constant(np.float32([0.5, -1.0]))

    n, m = len(inputs), len(sources)
    vjp = region_body(s, range(n)) if s.flag() else None
    jvp = region_body(s, range(n, n + m)) if s.flag() else None
    s.produce(s.builder.custom_fn(inputs, forward, vjp, jvp))


@RECIPES.register(SelectiveScanOp)
def selective_scan(s: GraphState, op: OpClass) -> None:
    """x, delta `[B, S, H]`, a `[H, N]`, b, c `[B, S, N]`, all of x's float dtype."""
    x = s.pick(floats_of_rank(3))
    if x is None:
        x = s.operand(s.shape(3, 3))
    batch, seq, hidden = shape_of(x)
    size = s.integer(1, 3)
    et = element_type(x)
    delta = s.operand((batch, seq, hidden), et)
    a = s.operand((hidden, size), et, param=True)
    b = s.operand((batch, seq, size), et)
    c = s.operand((batch, seq, size), et)
    s.emit(op, x, delta, a, b, c, state_size=size)


@RECIPES.register(GatedDeltaNetOp)
def gated_delta_net(s: GraphState, op: OpClass) -> None:
    """q, k, v `[B, S, H, N]`, g, beta `[B, S, H]`, and sometimes a state `[B, H, N, N]`."""
    q = s.pick(floats_of_rank(4))
    if q is None:
        q = s.operand(s.shape(4, 4))
    batch, seq, heads, size = shape_of(q)
    et = element_type(q)
    k, v = (s.operand((batch, seq, heads, size), et) for _ in range(2))
    g, beta = (s.operand((batch, seq, heads), et) for _ in range(2))
    state = s.operand((batch, heads, size, size), et) if s.flag() else None
    s.emit(op, q, k, v, g, beta, state, state_size=size)
