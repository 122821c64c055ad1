"""`rlx-fuse-residual-layer-norm`, `rlx-fuse-residual-rms-norm`: `norm(x + residual)` into one op.

RLX's `FuseResidualLN` / `FuseResidualRmsNorm` match a norm whose input is an
add used only by the norm (and not a graph output). Unlike RLX they keep the
norm's `axis` (RLX assumes -1) and emit the bias form RLX documents but never
builds: `norm((x + residual) + bias)` with a bias of rank <= 1 becomes
`fused_residual_*_norm %x, %residual, bias %bias, ...`.

Beyond RLX, the add may have other users (a pre-norm transformer's residual
stream: `h = x + r` feeds the norm and the next residual add, or is returned):
the fused op then keeps the sum as its second result, which replaces the add
everywhere else (vLLM's `fused_add_rms_norm` writes the sum back the same way).
The fused op goes where the norm was, or where the add was when one of the
add's other users comes before the norm (gamma and beta must then be defined
before the add; otherwise nothing is fused).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.dialects.mir.fused import FusedResidualLayerNormOp, FusedResidualRmsNormOp
from rlx_xdsl.dialects.mir.norm import AxisNormOperation, LayerNormOp, RmsNormOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.fusion.matching import (
    apply_patterns,
    dominates,
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
    """The add feeding the norm (used by the norm alone, or also by others: see `anchor`)."""
    return owner_if(norm.x, AddOp)


def other_users(add: AddOp, norm: AxisNormOperation) -> list[Operation]:
    """The ops using the add's sum besides the norm's input (a function result counts)."""
    return [use.operation for use in add.result.uses if use.operation is not norm or use.index != 0]


def anchor(adds: list[Operation], norm: AxisNormOperation, users: list[Operation]) -> Operation | None:
    """Where the fused op goes: at the norm, unless a user of the sum comes before it; then at the
    last add, if gamma and beta are available there; None when neither place works."""
    block = norm.parent_block()
    if all(later_in_block(user, norm, block) for user in users):
        return norm
    last = adds[-1]
    return last if all(dominates(v, last) for v in (norm.gamma, norm.beta)) else None


def later_in_block(user: Operation, op: Operation, block: Block | None) -> bool:
    """`user` (or the op of `block` holding it) comes after `op`."""
    while user.parent_block() is not block:
        user = user.parent_op()
        if user is None:
            return False
    return op.is_before_in_block(user)


def split_bias(add: AddOp) -> tuple[list[Operation], SSAValue, SSAValue, SSAValue | None]:
    """`(adds, x, residual, bias)`: `(x + residual) + bias` when one side is a rank <= 1 bias
    added to a single-use sum of two full values, else `add`'s own operands and no bias."""
    for inner_value, bias in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
        inner = owner_if(inner_value, AddOp)
        if inner is not None and used_once_by(inner.result, add) and rank(bias) <= 1 < rank(inner.result):
            return [inner, add], inner.lhs, inner.rhs, bias
    return [add], add.lhs, add.rhs, None


def one_element_type(*values: SSAValue | None) -> bool:
    """The summands share one element type (the fused op hides no promotion)."""
    return len({v.type.element_type for v in values if v is not None}) == 1


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
        if not one_element_type(x, residual, bias):
            return
        users = other_users(add, op)
        where = anchor(adds, op, users)
        if where is None:
            return
        e = Emitter.before(where, rewriter).fused([*adds, op])
        fused = FUSED_FORM[self.norm_class](
            x, residual, op.gamma, op.beta, bias, axis=op.axis.value.data, eps=op.eps.value.data, keep_sum=bool(users)
        )
        e.emit(fused)
        rewriter.replace(op, (), [fused.result])
        if fused.sum is not None:
            rewriter.replace_all_uses_with(add.result, fused.sum)
        for dead in reversed(adds):
            rewriter.erase(dead)


@dataclass(frozen=True)
class FuseResidualLayerNormPass(ModulePass):
    """Fuse layer_norm(x + residual [+ bias]) into mir.fused_residual_layer_norm (RLX's FuseResidualLN).

    The norm's axis and eps are kept; when the add has other users, the fused op
    also returns the sum, which replaces it there.
    """

    name = "rlx-fuse-residual-layer-norm"
    STATISTICS = (pattern_statistic(FuseResidualNorm),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseResidualNorm(LayerNormOp))


@dataclass(frozen=True)
class FuseResidualRmsNormPass(ModulePass):
    """Fuse rms_norm(x + residual [+ bias]) into mir.fused_residual_rms_norm (RLX's FuseResidualRmsNorm).

    The norm's axis and eps are kept; when the add has other users, the fused op
    also returns the sum, which replaces it there.
    """

    name = "rlx-fuse-residual-rms-norm"
    STATISTICS = (pattern_statistic(FuseResidualNorm),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseResidualNorm(RmsNormOp))
