"""Lowering of MIR structured ops: scans become `scf.for` loops over tensors, a custom
function runs its forward body inline, and the state-space recurrences lower through
their `rlx-unfuse` rules (unfolded in time).

A scan's body is inlined into the loop with its block arguments replaced by the
loop's carries, the bcasts and the step's slices (`xs[t]`). A saved trajectory is
a `[length, ...]` tensor filled row by row; with `num_checkpoints` its saved rows are
sliced out after the loop. Each step writes its carries into the loop's iter_args
(`Tensors.carried_in_place`), as upstream's one-shot bufferization requires.

`mir.scan_backward` first builds the carry entering every step (`[length, ...]`: the
initial carry and the trajectory shifted by one, or, for a checkpointed trajectory,
recomputed with the `forward` body from each checkpoint), then sweeps `vjp` from the
last step to the first. It holds all `length` carries at once, where the interpreter
bisects segments to hold `O(log)` of them.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rlx_xdsl import dtypes, layers
from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    by_expansion,
)
from rlx_xdsl.conversions.mir_to_linalg.scalars import I64
from rlx_xdsl.conversions.mir_to_linalg.tensors import Tensors
from rlx_xdsl.dialects.mir import structured as st
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.dense import numpy_to_dense
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.unfuse import UNFUSE_RULES


def inline(lw: Lowering, region: Region, values: Sequence[SSAValue], block: Block) -> list[SSAValue]:
    """Move `region`'s block to the end of `block` with its arguments replaced by `values`;
    drop its `mir.yield` and return what it yielded."""
    lw.rewriter.inline_block(region.block, InsertPoint.at_end(block), values)
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    yielded = list(terminator.values)
    lw.rewriter.erase(terminator)
    return yielded


def for_loop(lw: Lowering, count: int, init: Sequence[SSAValue]) -> tuple[scf.ForOp, Block, Tensors]:
    """An `scf.for` over `[0, count)` carrying `init`, inserted before the op; returns the
    loop, its body block (args: index, carried values) and an emitter at the block's end."""
    block = Block(arg_types=[IndexType(), *(v.type for v in init)])
    loop = scf.ForOp(
        lw.s.index_constant(0), lw.s.index_constant(count), lw.s.index_constant(1), list(init), Region(block)
    )
    lw.e.insert(loop)
    return loop, block, Tensors(Emitter.at_end(block, lw.e.location))


def finish(b: Tensors, loop_body: Block, values: Sequence[SSAValue]) -> None:
    """End the loop body yielding `values`, each written into its iter_arg."""
    loop_body.add_op(scf.YieldOp(*b.carried_in_place(values, loop_body.args[1:])))


@LOWERINGS.register(st.ScanOp)
def lower_scan(lw: Lowering, op: st.ScanOp) -> Sequence[SSAValue]:
    n = len(op.init)
    steps = op.steps
    trajectories = []
    if op.saves_trajectory:
        trajectories = [lw.empty([steps, *lw.dims(c)], _dtype_of(c.type)) for c in op.init]
    loop, block, b = for_loop(lw, steps, [*op.init, *trajectories])
    t, carries, rows = block.args[0], block.args[1 : 1 + n], block.args[1 + n :]
    slices = [b.row(x, t) for x in op.xs]
    after = inline(lw, op.body, [*carries, *op.bcasts, *slices], block)
    rows = [b.insert_row(c, r, t) for c, r in zip(after, rows)]
    finish(b, block, [*after, *rows])
    results = list(loop.results)
    if not op.saves_trajectory:
        return results[:n]
    full = results[n:]
    if not op.recomputes:
        return full
    return [lw.concat([_row_block(lw, f, s) for s in op.saved_steps()], 0) for f in full]


def _dtype_of(t: Attribute) -> DType:
    return dtypes.dtype_of(t.element_type)


def _row_block(lw: Tensors, stacked: SSAValue, index: int) -> SSAValue:
    """Rows `[index, index + 1)` of `stacked`, keeping the leading dim."""
    dims = lw.dims(stacked)
    return lw.extract_slice(stacked, [index] + [0] * (len(dims) - 1), [1, *dims[1:]])


@LOWERINGS.register(st.ScanBackwardOp)
def lower_scan_backward(lw: Lowering, op: st.ScanBackwardOp) -> Sequence[SSAValue]:
    n, steps = len(op.init), op.steps
    entering = _entering_carries(lw, op)
    zeros = [lw.full(lw.dims(c), _dtype_of(c.type), 0) for c in op.init]
    d_init = zeros if op.saves_trajectory else list(op.upstream)
    d_xs_init = [lw.full(lw.dims(x), _dtype_of(x.type), 0) for x in op.xs]
    loop, block, b = for_loop(lw, steps, [*d_init, *d_xs_init])
    i, d_carry, d_xs = block.args[0], list(block.args[1 : 1 + n]), list(block.args[1 + n :])
    t = b.emit(arith.SubiOp(b.s.index_constant(steps - 1), i))  # from the last step back
    if op.saves_trajectory:
        d_carry = _add_upstream_rows(b, op, t, d_carry)
    carries = [b.row(e, t) for e in entering]
    slices = [b.row(x, t) for x in op.xs]
    grads = inline(lw, op.vjp, [*carries, *slices, *d_carry], block)
    d_xs = [b.insert_row(g, d, t) for g, d in zip(grads[n:], d_xs)]
    finish(b, block, [*grads[:n], *d_xs])
    return list(loop.results)


def _add_upstream_rows(
    b: Tensors, op: st.ScanBackwardOp, t: SSAValue, d_carry: list[SSAValue]
) -> list[SSAValue]:
    """`d_carry + upstream[row]` when step `t` saved trajectory row `row` (from a constant table)."""
    table = np.full(op.steps, -1, np.int64)
    for row, step in enumerate(op.saved_steps()):
        table[step] = row
    rows = b.emit(arith.ConstantOp(numpy_to_dense(table)))
    row = b.s.to_index(b.extract_scalar(b.extract_slice(rows, [t], [1])), I64)
    saved = b.s.index_compare("ge", row, b.s.index_constant(0))
    clamped = b.emit(arith.MaxSIOp(row, b.s.index_constant(0)))
    added = []
    for d, up in zip(d_carry, op.upstream):
        dt = _dtype_of(d.type)
        with_row = b.map_elements([d, b.row(up, clamped)], b.dims(d), dt, lambda s, x, u, _: s.add(x, u, dt))
        added.append(b.emit(arith.SelectOp(saved, with_row, d)))
    return added


def _entering_carries(lw: Lowering, op: st.ScanBackwardOp) -> list[SSAValue]:
    """`[length, *carry]` per carry: the carry entering each step."""
    n, steps = len(op.init), op.steps
    if not op.recomputes:  # the initial carry, then trajectory rows 0 .. length-2
        out = []
        for init, traj in zip(op.init, op.trajectory):
            first = lw.insert_row(init, lw.empty([1, *lw.dims(init)], _dtype_of(init.type)), 0)
            if steps == 1:
                out.append(first)
                continue
            dims = lw.dims(traj)
            rest = lw.extract_slice(traj, [0] * len(dims), [steps - 1, *dims[1:]])
            out.append(lw.concat([first, rest], 0))
        return out
    # Recompute: step t starts from a checkpoint when a segment starts there, else from step t-1.
    segment_of = np.full(op.steps, -1, np.int64)
    bounds = [0] + [s + 1 for s in op.saved_steps()]
    for k, start in enumerate(bounds[:-1]):
        segment_of[start] = k
    buffers = [lw.empty([steps, *lw.dims(c)], _dtype_of(c.type)) for c in op.init]
    loop, block, b = for_loop(lw, steps, [*op.init, *buffers])
    t, carries, rows = block.args[0], list(block.args[1 : 1 + n]), list(block.args[1 + n :])
    table = b.emit(arith.ConstantOp(numpy_to_dense(segment_of)))
    k = b.s.to_index(b.extract_scalar(b.extract_slice(table, [t], [1])), I64)
    starts = b.s.index_compare("ge", k, b.s.index_constant(0))
    first_segment = b.s.index_compare("eq", k, b.s.index_constant(0))
    previous_row = b.emit(
        arith.MaxSIOp(b.emit(arith.SubiOp(k, b.s.index_constant(1))), b.s.index_constant(0))
    )
    entering = []
    for carry, init, traj in zip(carries, op.init, op.trajectory):
        anchor = b.emit(arith.SelectOp(first_segment, init, b.row(traj, previous_row)))
        entering.append(b.emit(arith.SelectOp(starts, anchor, carry)))
    rows = [b.insert_row(c, r, t) for c, r in zip(entering, rows)]
    nexts = inline(lw, op.forward, [*entering, *(b.row(x, t) for x in op.xs)], block)
    finish(b, block, [*nexts, *rows])
    return list(loop.results[n:])


@LOWERINGS.register(st.CustomFnOp)
def lower_custom_fn(lw: Lowering, op: st.CustomFnOp) -> Sequence[SSAValue]:
    """Running a custom function runs its forward body; vjp/jvp are for autodiff only."""
    lw.rewriter.inline_block(op.forward.block, InsertPoint.before(op), list(op.inputs))
    terminator = op.prev_op
    assert isinstance(terminator, YieldOp)
    yielded = list(terminator.values)
    lw.rewriter.erase(terminator)
    return yielded


layers.load("unfuse")
for _op in (st.SelectiveScanOp, st.GatedDeltaNetOp):
    LOWERINGS.add(_op, by_expansion(UNFUSE_RULES[_op]))
