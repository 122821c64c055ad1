"""`rlx-fuse-rms-norm-reshape`: an rms_norm whose only user flattens its leading dims.

RLX's `FuseRmsNormReshape` drops the `Reshape([prod(leading), H])` and gives
the RmsNorm node the 2-D output shape (a special case in its shape
inference). Here types are inferred, so the same rewrite is spelled as moving
the flatten before the norm: a norm over the last axis treats every row alike,
so `reshape(rms_norm(x))` equals `rms_norm(reshape(x))`, and the norm then
produces the flattened shape directly. The flatten becomes a view of the
norm's input (a reshape never copies), so the norm's output feeds its users
without a separate data-movement op. The norm must normalise only the last
axis (RLX does not check).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.mir.norm import RmsNormOp
from rlx_xdsl.dialects.mir.shape import ReshapeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, shape_of
from rlx_xdsl.transforms.fusion.matching import apply_patterns, sole_user
from rlx_xdsl.transforms.statistics import pattern_statistic


def is_leading_flatten(reshape: ReshapeOp) -> bool:
    """The reshape turns `[d0, ..., dn-2, H]` into `[d0 * ... * dn-2, H]` (RLX's `leading_flatten_shape`)."""
    in_shape = shape_of(reshape.input.type)
    new_shape = reshape.new_shape.get_values()
    if len(in_shape) < 2 or len(new_shape) != 2 or in_shape[-1] == DYNAMIC or new_shape[1] != in_shape[-1]:
        return False
    leading = in_shape[:-1]
    if DYNAMIC in leading:
        return new_shape[0] == -1
    return new_shape[0] in (-1, math.prod(leading))


class FuseRmsNormReshape(RewritePattern):
    """`reshape(rms_norm(x), [rows, H])` becomes `rms_norm(reshape(x, [rows, H]))`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, norm: RmsNormOp, rewriter: PatternRewriter) -> None:
        reshape = sole_user(norm.result)
        if not isinstance(reshape, ReshapeOp) or not is_leading_flatten(reshape):
            return
        if norm.normalized_axis() != len(shape_of(norm.x.type)) - 1:
            return
        e = Emitter.replacing(reshape, rewriter).fused([norm, reshape])
        flat = e.emit(ReshapeOp(norm.x, new_shape=reshape.new_shape.get_values()))
        fused = RmsNormOp(flat, norm.gamma, norm.beta, axis=-1, eps=norm.eps.value.data)
        e.replace(reshape, e.emit(fused))
        rewriter.erase(norm)


@dataclass(frozen=True)
class FuseRmsNormReshapePass(ModulePass):
    """Let an rms_norm over the last axis produce the leading-dims flatten its only user computes.

    RLX's FuseRmsNormReshape; the flatten moves to the norm's input, where it is a view.
    """

    name = "rlx-fuse-rms-norm-reshape"
    STATISTICS = (pattern_statistic(FuseRmsNormReshape),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseRmsNormReshape())
