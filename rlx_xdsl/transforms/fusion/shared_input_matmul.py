"""`rlx-fuse-shared-input-matmul`: matmuls of one input become one wider matmul.

RLX's `FuseSharedInputMatMul`: two or more `x @ w_i` with the same `x` become
`x @ concat(w_1, ..., w_n)` followed by one `narrow` of the last axis per
original matmul (QKV projections, the gate/up pair, MoE experts). Every weight
is a static-width rank-2 matrix with the same row count; unlike RLX the
weights must also share one element type, which the concat requires. The
weight concat depends only on parameters, so it is computed once, not per run.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.shape import ConcatOp, NarrowOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, shape_of
from rlx_xdsl.transforms.fusion.matching import apply_patterns, dominates
from rlx_xdsl.transforms.statistics import pattern_statistic


def shared_input_matmuls(x: SSAValue) -> list[MatmulOp]:
    """The matmuls with `x` as their lhs, in block order (one block: x's users there)."""
    members = {use.operation for use in x.uses if use.index == 0 and isinstance(use.operation, MatmulOp)}
    if len(members) < 2:
        return list(members)
    owner = x.owner
    op: Operation | None = owner.next_op if isinstance(owner, Operation) else owner.first_op
    ordered: list[MatmulOp] = []
    while op is not None and len(ordered) < len(members):
        if op in members:
            ordered.append(op)
        op = op.next_op
    return ordered


def compatible_weights(matmuls: list[MatmulOp]) -> bool:
    """Static-width rank-2 weights with equal rows and one element type (concat along axis 1)."""
    shapes = [shape_of(m.rhs.type) for m in matmuls]
    if any(len(s) != 2 or s[1] == DYNAMIC for s in shapes):
        return False
    return len({s[0] for s in shapes}) == 1 and len({m.rhs.type.element_type for m in matmuls}) == 1


class FuseSharedInputMatmul(RewritePattern):
    """`x @ w_1, ..., x @ w_n` become narrows of `x @ concat(w_1, ..., w_n)`; fires at the first matmul."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: MatmulOp, rewriter: PatternRewriter) -> None:
        group = shared_input_matmuls(op.lhs)
        if len(group) < 2 or group[0] is not op or not compatible_weights(group):
            return
        if not all(dominates(m.rhs, op) for m in group):
            return  # a weight computed between the matmuls: the wide matmul has no place to go
        e = Emitter.replacing(op, rewriter).fused(group)
        weights = e.emit(ConcatOp(*(m.rhs for m in group), axis=1))
        wide = e.emit(MatmulOp(op.lhs, weights))
        start = 0
        for member in group:
            width = shape_of(member.rhs.type)[1]
            part = Emitter.replacing(member, rewriter)
            part.replace(member, part.emit(NarrowOp(wide, axis=-1, start=start, len=width)))
            start += width


@dataclass(frozen=True)
class FuseSharedInputMatmulPass(ModulePass):
    """Fuse matmuls sharing their lhs into one matmul over concatenated weights plus narrows
    (RLX's FuseSharedInputMatMul).

    Weights: rank 2, static width, equal rows, one element type.
    """

    name = "rlx-fuse-shared-input-matmul"
    STATISTICS = (pattern_statistic(FuseSharedInputMatmul),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseSharedInputMatmul())
