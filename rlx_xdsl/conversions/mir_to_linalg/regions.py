"""Lowering of MIR control flow to `scf`: `mir.if` becomes `scf.if` and `mir.while`
becomes `scf.while`.

MIR regions receive their captures (or carried values) as block arguments; the
`scf` regions read values from above, so each MIR block is inlined with its
arguments replaced by the values they stood for, and its `mir.yield` becomes
`scf.yield` (or `scf.condition`). A one-element predicate tensor becomes an
`i1` through `tensor.extract` and a `!= 0` test. The ops inside the regions are
lowered by their own rules like any other op.

`max_iterations` is an extra `index` loop counter that the condition also tests.
The body writes its next carried values into its block arguments (`linalg.copy`),
as upstream's one-shot bufferization requires of a loop.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import arith, scf
from xdsl.dialects.builtin import IndexType
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    converted_type,
)
from rlx_xdsl.conversions.mir_to_linalg.tensors import Tensors
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp
from rlx_xdsl.ir.emitter import Emitter


def predicate(lw: Tensors, value: SSAValue) -> SSAValue:
    """The `i1` truth of a one-element tensor (nonzero is true)."""
    dt = dtypes.dtype_of(value.type.element_type)  # `!= 0` reads signless storage the same way
    return lw.s.is_true(lw.extract_scalar(value), dt)


def inline_body(lw: Lowering, region: Region, values: Sequence[SSAValue], block: Block) -> YieldOp:
    """Move `region`'s block to the end of `block`, its arguments replaced by `values`;
    returns the `mir.yield` that ended it (now last in `block`)."""
    lw.rewriter.inline_block(region.block, InsertPoint.at_end(block), values)
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    return terminator


@LOWERINGS.register(IfOp)
def lower_if(lw: Lowering, op: IfOp) -> Sequence[SSAValue]:
    branches = []
    for region in (op.then_region, op.else_region):
        block = Block()
        yielded = inline_body(lw, region, list(op.captures), block)
        lw.rewriter.replace(yielded, scf.YieldOp(*yielded.values))
        branches.append(Region(block))
    condition = predicate(lw, op.pred)
    result_types = [converted_type(t) for t in lw.types.results]
    lowered = scf.IfOp(condition, result_types, branches[0], branches[1])
    lw.e.insert(lowered)
    return list(lowered.results)


@LOWERINGS.register(WhileOp)
def lower_while(lw: Lowering, op: WhileOp) -> Sequence[SSAValue]:
    carried_types = [converted_type(t) for t in lw.types.operands]
    limit = op.iteration_limit
    counter_types = [IndexType()] if limit is not None else []
    init = list(op.init) + ([lw.s.index_constant(0)] if limit is not None else [])

    before = Block(arg_types=[*carried_types, *counter_types])
    cond = inline_body(lw, op.cond_region, before.args[: len(carried_types)], before)
    at_cond = Tensors(Emitter.before(cond))
    s = at_cond.s
    go_on = predicate(at_cond, cond.values[0])
    if limit is not None:
        below = s.index_compare("lt", before.args[-1], s.index_constant(limit))
        go_on = s.emit(arith.AndIOp(go_on, below))
    lw.rewriter.replace(cond, scf.ConditionOp(go_on, *before.args))

    after = Block(arg_types=[*carried_types, *counter_types])
    carried = after.args[: len(carried_types)]
    body = inline_body(lw, op.body_region, carried, after)
    at_end = Tensors(Emitter.before(body))
    next_values = at_end.carried_in_place(body.values, carried)
    if limit is not None:
        s = at_end.s
        next_values.append(s.emit(arith.AddiOp(after.args[-1], s.index_constant(1))))
    lw.rewriter.replace(body, scf.YieldOp(*next_values))

    loop = scf.WhileOp(init, [*carried_types, *counter_types], Region(before), Region(after))
    lw.e.insert(loop)
    return list(loop.results[: len(carried_types)])
