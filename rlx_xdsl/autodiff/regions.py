"""Autodiff inside regions: the vjp body of a region.

`vjp_region(body)` is the region counterpart of `rlx-grad`: for a body
`(a...) -> (y...)` ending with `mir.yield`, it builds `(a..., dy...) -> (da...)`,
the vector-Jacobian product of the body with every argument, by the same
reverse sweep `rlx-grad` runs over a function (`ReverseSweep`, the same `VJP_RULES`).
The body's ops are recomputed at the start of the new region (RLX's scan rule
takes `grad(body, all inputs)` the same way); whatever the gradients do not use
is swept away afterwards. A body op on a gradient path without a rule is a
located error at that op.
(Inlining a body, as a `mir.custom_fn`'s vjp body is by its rule and its forward body
by `inline-custom-fn`, is `transforms.inlining.inline_block`.)
"""

from __future__ import annotations

from xdsl.builder import Builder
from xdsl.ir import Region, SSAValue
from xdsl.rewriter import InsertPoint

from rlx_xdsl.autodiff.emit import zeros_like
from rlx_xdsl.autodiff.grad import ReverseSweep
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.ir.emitter import Emitter
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
