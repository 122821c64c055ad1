"""`rlx-fuse-matmul-epilogue`: the elementwise chain after a matmul runs inside the matmul.

Beyond RLX, as IREE's dispatch formation and Inductor's epilogue fusion do: a
matmul whose result flows through a chain of elementwise ops, each the only
consumer of the previous value (bias add, activation, residual add, scale,
cast...), becomes one `mir.fused_matmul_epilogue` whose body is that chain.
The chain stops before an op that would enlarge the matmul's result shape
(an epilogue writes each result element once). Values the chain combines
with become the op's extras; constants too.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.fused_regions import FusedMatmulEpilogueOp
from rlx_xdsl.dialects.mir.regions import YieldOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import dims_match, shape_of
from rlx_xdsl.transforms.fusion.elementwise_regions import is_step
from rlx_xdsl.transforms.fusion.matching import apply_patterns, sole_user
from rlx_xdsl.transforms.statistics import pattern_statistic


def keeps_shape(value: SSAValue, shape) -> bool:
    other = shape_of(value.type)
    return len(other) == len(shape) and all(map(dims_match, other, shape))


def epilogue_chain(mm: MatmulOp) -> list[Operation]:
    """The elementwise ops consuming the matmul's result one after another, each alone."""
    shape = shape_of(mm.result.type)
    chain: list[Operation] = []
    value: SSAValue = mm.result
    while (user := sole_user(value)) is not None and is_step(user) and user.parent is mm.parent:
        if not keeps_shape(user.results[0], shape):
            break
        chain.append(user)
        value = user.results[0]
    return chain


def extras_of(chain: list[Operation], product: SSAValue) -> list[SSAValue]:
    """The values the chain reads besides the product and its own results, de-duplicated in order."""
    inside = {product, *(op.results[0] for op in chain)}
    seen: dict[SSAValue, None] = {}
    for op in chain:
        for value in op.operands:
            if value not in inside:
                seen.setdefault(value)
    return list(seen)


def epilogue_body(mm: MatmulOp, chain: list[Operation], extras: list[SSAValue]) -> Region:
    """The chain cloned onto block arguments `(acc, *extras)`, yielding its last value."""
    block = Block(arg_types=[mm.result.type, *(v.type for v in extras)])
    block.args[0].name_hint = "acc"
    mapping: dict[SSAValue, SSAValue] = {mm.result: block.args[0], **dict(zip(extras, block.args[1:]))}
    for arg, value in zip(block.args[1:], extras):
        arg.name_hint = value.name_hint
    for op in chain:
        block.add_op(op.clone(value_mapper=mapping))
    block.add_op(YieldOp(mapping[chain[-1].results[0]]))
    return Region(block)


class FuseMatmulEpilogue(RewritePattern):
    """`matmul` and the single-consumer elementwise chain after it become `mir.fused_matmul_epilogue`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mm: MatmulOp, rewriter: PatternRewriter) -> None:
        chain = epilogue_chain(mm)
        if not chain:
            return
        tail = chain[-1]
        extras = extras_of(chain, mm.result)
        e = Emitter.replacing(tail, rewriter).fused([mm, *chain])
        fused = e.emit(FusedMatmulEpilogueOp(mm.lhs, mm.rhs, extras, epilogue_body(mm, chain, extras)))
        e.replace(tail, fused)
        for dead in reversed([mm, *chain[:-1]]):
            rewriter.erase(dead)


@dataclass(frozen=True)
class FuseMatmulEpiloguePass(ModulePass):
    """Fold the single-consumer elementwise chain after each matmul into mir.fused_matmul_epilogue.

    Beyond RLX (IREE/Inductor-style epilogue fusion): bias, activation,
    residual add, scale and casts run in the matmul's kernel.
    """

    name = "rlx-fuse-matmul-epilogue"
    STATISTICS = (pattern_statistic(FuseMatmulEpilogue),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseMatmulEpilogue())
