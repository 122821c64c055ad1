"""Autodiff inside regions: the vjp body of a region, and inlining a region's body.

`vjp_region(body)` is the region counterpart of `rlx-grad`: for a body
`(a...) -> (y...)` ending with `mir.yield`, it builds `(a..., dy...) -> (da...)`,
the vector-Jacobian product of the body with every argument, by the same
reverse sweep `rlx-grad` runs over a function (`ReverseSweep`, the same `VJP_RULES`).
The body's ops are recomputed at the start of the new region (RLX's scan rule
takes `grad(body, all inputs)` the same way); whatever the gradients do not use
is swept away afterwards. A body op on a gradient path without a rule is a
located error at that op.

`inline_region(e, region, args)` copies a region's single block where `e`
emits, its arguments bound to `args`, and returns the values it yields: a
`mir.custom_fn`'s vjp body is used this way by its rule, its forward body by
`inline-custom-fn`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import Builder
from xdsl.ir import Block, Region, SSAValue
from xdsl.rewriter import InsertPoint

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.grad import ReverseSweep
from rlx_xdsl.building.emitter import Emitter
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.transforms.dce import eliminate_dead_code_in_block


def vjp_region(body: Region) -> Region:
    """`(a..., dy...) -> (da...)`: the VJP of `body` (`(a...) -> (y...)`) with each argument.

    An argument no gradient reaches (an integer, or one the yields do not
    depend on) gets zeros of its type, so the signature is always complete.
    """
    region = body.clone()
    block = region.block
    terminator = block.last_op
    assert isinstance(terminator, YieldOp)
    inputs = list(block.args)
    seeds = [block.insert_arg(v.type, len(block.args)) for v in terminator.values]
    for value, seed in zip(terminator.values, seeds):
        if value.name_hint and SSAValue.is_valid_name(f"d_{value.name_hint}"):
            seed.name_hint = f"d_{value.name_hint}"

    sweep = ReverseSweep(block, {op: op for op in block.ops})
    sweep.mark_active(inputs)
    e = Emitter(Builder(InsertPoint.before(terminator)), terminator.location)
    for value, seed in zip(terminator.values, seeds):
        if value in sweep.active:
            sweep.accumulate(e, value, seed)
    sweep.run(terminator)

    gradients = [sweep.cotangents.get(arg) for arg in inputs]
    gradients = [zeros_like(e, arg) if g is None else g for arg, g in zip(inputs, gradients)]
    e.insert(YieldOp(*gradients))
    block.erase_op(terminator)
    eliminate_dead_code_in_block(block)
    return region


def inline_region(e: Emitter, region: Region, args: Sequence[SSAValue]) -> list[SSAValue]:
    """Copy `region`'s block where `e` emits, with its arguments bound to `args`; the yielded values."""
    block: Block = region.block
    mapping = {arg: value for arg, value in zip(block.args, args, strict=True)}
    yielded: list[SSAValue] = []
    for op in block.ops:
        if isinstance(op, YieldOp):
            yielded = [mapping.get(v, v) for v in op.values]
            break
        copy = op.clone(value_mapper=mapping)
        e.insert(copy)
        mapping.update(zip(op.results, copy.results))
    return yielded
