"""`rlx-lower-dot-general`: every `mir.dot_general` as a (batched) `mir.matmul`.

RLX's `LowerDotGeneral` rewrites only the 2-D `[M, K] x [K, N]` case. Any
contraction is a batched matmul once its axes are grouped: the lhs is
transposed to `[batch..., free..., contracting...]` and reshaped to
`[B, M, K]`, the rhs to `[batch..., contracting..., free...]` and `[B, K, N]`,
and the `[B, M, N]` product is reshaped to the result's
`[batch..., lhs free..., rhs free...]`. Transposes and reshapes that would
change nothing are left out, so the 2-D case is a bare matmul. A group with
more than one dynamic dim cannot be reshaped (a reshape infers at most one
`-1`); such a dot_general is left as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.base import refine_dim
from rlx_xdsl.dialects.mir.contraction import DotGeneralOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, shape_of
from rlx_xdsl.transforms.fusion.matching import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic


def reshape_entries(groups: Sequence[Sequence[int]]) -> list[int] | None:
    """One reshape entry per group of dims (the product; -1 for a group with a dynamic dim),
    or None when that needs more than one -1 (a group with two dynamic dims, or two such groups)."""
    entries = []
    for group in groups:
        dynamic = sum(d == DYNAMIC for d in group)
        if dynamic > 1:
            return None
        entries.append(-1 if dynamic else math.prod(group))
    return entries if entries.count(-1) <= 1 else None


def arrange(e: Emitter, value: SSAValue, order: Sequence[int], groups: Sequence[Sequence[int]]) -> SSAValue:
    """`value` transposed to `order`, then reshaped to one dim per group (steps that change nothing omitted)."""
    if list(order) != list(range(len(order))):
        value = e.mir.transpose(value, perm=list(order))
    if any(len(group) != 1 for group in groups):
        entries = reshape_entries(groups)
        assert entries is not None
        value = e.mir.reshape(value, new_shape=entries)
    return value


class LowerDotGeneral(RewritePattern):
    """A `dot_general` becomes transposes, reshapes and one (batched) `matmul`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: DotGeneralOp, rewriter: PatternRewriter) -> None:
        lc, rc, lb, rb = (list(axes) for axes in op.axis_lists())
        a, b = shape_of(op.lhs.type), shape_of(op.rhs.type)
        lf = [i for i in range(len(a)) if i not in lb + lc]
        rf = [j for j in range(len(b)) if j not in rb + rc]
        batch = [refine_dim(a[i], b[j]) for i, j in zip(lb, rb)]
        contracted = [refine_dim(a[i], b[j]) for i, j in zip(lc, rc)]
        batch_group = [batch] if batch else []
        lhs_groups = [*batch_group, [a[i] for i in lf], contracted]
        rhs_groups = [*batch_group, contracted, [b[j] for j in rf]]
        result_shape = shape_of(op.result.type)
        # The product is [B, M, N] (or [M, N]): it is the result when every group is a single dim.
        needs_final_reshape = len(lb) > 1 or len(lf) != 1 or len(rf) != 1
        final = [-1 if d == DYNAMIC else d for d in result_shape]
        if reshape_entries(lhs_groups) is None or reshape_entries(rhs_groups) is None:
            return
        if needs_final_reshape and final.count(-1) > 1:
            return
        e = Emitter.replacing(op, rewriter)
        lhs = arrange(e, op.lhs, lb + lf + lc, lhs_groups)
        product = e.mir.matmul(lhs, arrange(e, op.rhs, rb + rc + rf, rhs_groups))
        if needs_final_reshape or (product.type != op.result.type and final.count(-1) <= 1):
            product = e.mir.reshape(product, new_shape=final)  # also pins dims `?` hid from the matmul
        if product.type == op.result.type:
            e.replace(op, product)


@dataclass(frozen=True)
class LowerDotGeneralPass(ModulePass):
    """Rewrite every mir.dot_general as transposes, reshapes and a (batched) mir.matmul
    (RLX's LowerDotGeneral, generalised).

    RLX lowers only the 2-D case; a dot_general whose grouped dims would need two dynamic reshape entries stays.
    """

    name = "rlx-lower-dot-general"
    STATISTICS = (pattern_statistic(LowerDotGeneral),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, LowerDotGeneral())
