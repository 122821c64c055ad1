"""`rlx-fuse-residual-layer-norm`, `rlx-fuse-residual-rms-norm`: `norm(x + residual)` into one op.

RLX's `FuseResidualLN` / `FuseResidualRmsNorm` match a norm whose input is an
add used only by the norm (and not a graph output). Unlike RLX they keep the
norm's `axis` (RLX assumes -1) and emit the bias form RLX documents but never
builds: `norm((x + residual) + bias)` with a bias of rank <= 1 becomes
`fused_residual_*_norm %x, %residual, bias %bias, ...`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.dialects.mir.fused import FusedResidualLayerNormOp, FusedResidualRmsNormOp
from rlx_xdsl.dialects.mir.norm import AxisNormOperation, LayerNormOp, RmsNormOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.transforms.fusion.matching import (
    apply_patterns,
    owner_if,
    rank,
    used_once_by,
)
from rlx_xdsl.transforms.statistics import pattern_statistic

FUSED_FORM: dict[type[AxisNormOperation], type[AxisNormOperation]] = {
    LayerNormOp: FusedResidualLayerNormOp,
    RmsNormOp: FusedResidualRmsNormOp,
}
"""Each norm and the fused op that adds its residual first."""


def residual_add(norm: AxisNormOperation) -> AddOp | None:
    """The add feeding the norm, when the norm is its only user."""
    add = owner_if(norm.x, AddOp)
    return add if add is not None and used_once_by(add.result, norm) else None


def split_bias(add: AddOp) -> tuple[list[Operation], SSAValue, SSAValue, SSAValue | None]:
    """`(adds, x, residual, bias)`: `(x + residual) + bias` when one side is a rank <= 1 bias
    added to a single-use sum of two full values, else `add`'s own operands and no bias."""
    for inner_value, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        inner = owner_if(inner_value, AddOp)
        if inner is not None and used_once_by(inner.result, add) and rank(bias) <= 1 < rank(inner.result):
            return [inner, add], inner.lhs, inner.rhs, bias
    return [add], add.lhs, add.rhs, None


class FuseResidualNorm(RewritePattern):
    """`norm(x + residual [+ bias])` becomes `fused_residual_<norm>` with the norm's axis and eps."""

    def __init__(self, norm_class: type[AxisNormOperation]):
        self.norm_class = norm_class

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        if type(op) is not self.norm_class:
            return
        assert isinstance(op, AxisNormOperation)
        add = residual_add(op)
        if add is None:
            return
        adds, x, residual, bias = split_bias(add)
        dtypes = {v.type.element_type for v in (x, residual, bias) if v is not None}
        if len(dtypes) != 1:
            return  # the fused op hides no promotion
        e = Emitter.replacing(op, rewriter).fused([*adds, op])
        fused = FUSED_FORM[self.norm_class](
            x, residual, op.gamma, op.beta, bias, axis=op.axis.value.data, eps=op.eps.value.data
        )
        e.replace(op, e.emit(fused))
        for dead in reversed(adds):
            rewriter.erase(dead)


@dataclass(frozen=True)
class FuseResidualLayerNormPass(ModulePass):
    """Fuse layer_norm(x + residual [+ bias]) into mir.fused_residual_layer_norm (RLX's FuseResidualLN).

    The add must be used only by the norm; the norm's axis and eps are kept.
    """

    name = "rlx-fuse-residual-layer-norm"
    STATISTICS = (pattern_statistic(FuseResidualNorm),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseResidualNorm(LayerNormOp))


@dataclass(frozen=True)
class FuseResidualRmsNormPass(ModulePass):
    """Fuse rms_norm(x + residual [+ bias]) into mir.fused_residual_rms_norm (RLX's FuseResidualRmsNorm).

    The add must be used only by the norm; the norm's axis and eps are kept.
    """

    name = "rlx-fuse-residual-rms-norm"
    STATISTICS = (pattern_statistic(FuseResidualNorm),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseResidualNorm(RmsNormOp))
