"""`rlx-fuse-matmul-bias-act`: `act(x @ w + bias)` chains into `mir.fused_matmul_bias_act`.

RLX's `FuseMatMulBiasAct`: a matmul whose only user adds a bias of rank <= 1;
the activation is folded too when the add's only user is gelu or silu (other
activations stay separate ops, e.g. the exp of Qwen3.5's softplus). Use counts
include function results, so a matmul or add the function also returns is
never fused away (RLX's pass does not check graph outputs).
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

from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.dialects.mir.fused import FusedMatmulBiasActOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import broadcasts_to, shape_of
from rlx_xdsl.transforms.fusion.matching import (
    activation_kind,
    apply_patterns,
    rank,
    sole_user,
)
from rlx_xdsl.transforms.statistics import pattern_statistic

EPILOGUE_ACTIVATIONS = frozenset({Activation.GELU, Activation.SILU})
"""The activations RLX fuses into the matmul's epilogue."""


def bias_of(add: AddOp, product: SSAValue) -> SSAValue:
    """The operand of `add` that is not `product` (the add is commutative)."""
    return add.rhs if add.lhs is product else add.lhs


def fusable_bias(product: SSAValue, bias: SSAValue) -> bool:
    """RLX's rank <= 1 bias, which the fused op can take: same dtype, fits the product's shape."""
    return (
        rank(bias) <= 1
        and bias is not product
        and bias.type.element_type == product.type.element_type
        and broadcasts_to(shape_of(bias.type), shape_of(product.type))
    )


def epilogue_activation(add: AddOp) -> Operation | None:
    """The add's only user when it is an activation RLX fuses (gelu, silu)."""
    user = sole_user(add.result)
    return user if activation_kind(user) in EPILOGUE_ACTIVATIONS else None


class FuseMatmulBiasAct(RewritePattern):
    """`matmul -> add(bias) [-> gelu|silu]` becomes one `mir.fused_matmul_bias_act`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mm: MatmulOp, rewriter: PatternRewriter) -> None:
        add = sole_user(mm.result)
        if not isinstance(add, AddOp):
            return
        bias = bias_of(add, mm.result)
        if not fusable_bias(mm.result, bias):
            return
        act = epilogue_activation(add)
        chain = [mm, add] if act is None else [mm, add, act]
        tail = chain[-1]
        e = Emitter.replacing(tail, rewriter).fused(chain)
        fused = e.emit(FusedMatmulBiasActOp(mm.lhs, mm.rhs, bias, activation=activation_kind(act)))
        e.replace(tail, fused)
        for op in reversed(chain[:-1]):
            rewriter.erase(op)


@dataclass(frozen=True)
class FuseMatmulBiasActPass(ModulePass):
    """Fuse matmul + bias add (+ gelu/silu) chains into mir.fused_matmul_bias_act (RLX's FuseMatMulBiasAct).

    The bias has rank <= 1; only single-use links fuse, and a value the
    function returns counts as used.
    """

    name = "rlx-fuse-matmul-bias-act"
    STATISTICS = (pattern_statistic(FuseMatmulBiasAct),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseMatmulBiasAct())
