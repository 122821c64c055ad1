"""SwiGLU fusions: `silu(gate) * up` into `mir.fused_swiglu`.

* `rlx-fuse-swiglu-dual-matmul` (RLX's `FuseSwiGLUDualMatmul`): `mul(x @ w_up,
  silu(x @ w_gate))` becomes `fused_swiglu(x @ concat(w_up, w_gate))`. The
  weight concat depends only on parameters, so it is computed once, not per
  run. Unlike RLX both matmuls must be used only here (RLX deletes them even
  when something else reads them) and have the same width. As RLX's report
  hint says ("pass up_w before gate_w"), the up matmul must come first; a
  gate-first pair is left to `rlx-fuse-shared-input-matmul` + `rlx-fuse-swiglu`,
  which fuse it with `gate_first`.
* `rlx-fuse-swiglu` (RLX's `FuseSwiGLU`): `mul(narrow(cat, 0, N), silu(narrow(cat, N, N)))`
  becomes `fused_swiglu(cat)`, `gate_first` when the silu reads the low half.
  Unlike RLX the narrows must split the *last* axis of a `2N`-wide value exactly
  in halves, which is what `fused_swiglu` computes.
"""

from __future__ import annotations

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

from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import MulOp, SiluOp
from rlx_xdsl.dialects.mir.fused import FusedSwigluOp
from rlx_xdsl.dialects.mir.shape import ConcatOp, NarrowOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, is_static, normalize_axis, shape_of
from rlx_xdsl.transforms.fusion.matching import apply_patterns, owner_if, used_once_by
from rlx_xdsl.transforms.statistics import pattern_statistic


def silu_and_other(mul: MulOp) -> tuple[SiluOp, SSAValue] | None:
    """The silu operand of `mul` (used only by it) and the other operand, in either order."""
    for candidate, other in ((mul.rhs, mul.lhs), (mul.lhs, mul.rhs)):
        silu = owner_if(candidate, SiluOp)
        if silu is not None and used_once_by(silu.result, mul):
            return silu, other
    return None


def single_use_operand(value: SSAValue, op_class, user):
    """The `op_class` op defining `value` when `user` is its only user."""
    owner = owner_if(value, op_class)
    return owner if owner is not None and used_once_by(value, user) else None


def is_static_matrix(value: SSAValue) -> bool:
    shape = shape_of(value.type)
    return len(shape) == 2 and is_static(shape)


class FuseSwigluDualMatmul(RewritePattern):
    """`mul(x @ w_up, silu(x @ w_gate))` becomes `fused_swiglu(x @ concat(w_up, w_gate))`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        found = silu_and_other(mul)
        if found is None:
            return
        silu, up_value = found
        up = single_use_operand(up_value, MatmulOp, mul)
        gate = single_use_operand(silu.input, MatmulOp, silu)
        if up is None or gate is None or up.lhs is not gate.lhs:
            return
        w_up, w_gate = up.rhs, gate.rhs
        if not (is_static_matrix(w_up) and is_static_matrix(w_gate)) or w_up.type != w_gate.type:
            return
        if not up.is_before_in_block(gate):
            return  # gate declared first: the report says why (SwigluGateBeforeUp)
        e = Emitter.replacing(mul, rewriter).fused([up, gate, silu, mul])
        weights = e.emit(ConcatOp(w_up, w_gate, axis=1))
        fused = e.emit(FusedSwigluOp(e.emit(MatmulOp(up.lhs, weights))))
        e.replace(mul, fused)
        for dead in (silu, gate, up):
            rewriter.erase(dead)


def halves(up: NarrowOp, gate: NarrowOp) -> bool | None:
    """`gate_first` when the narrows split the last axis of one `2N`-wide value in halves, else None."""
    if up.input is not gate.input or up.len.value.data != gate.len.value.data:
        return None
    shape = shape_of(up.input.type)
    width, n = shape[-1], up.len.value.data
    last = len(shape) - 1
    axes = {normalize_axis(op.axis.value.data, len(shape)) for op in (up, gate)}
    if axes != {last} or width == DYNAMIC or width != 2 * n:
        return None
    starts = (up.start.value.data, gate.start.value.data)
    return {(0, n): False, (n, 0): True}.get(starts)


class FuseSwiglu(RewritePattern):
    """`mul(narrow(cat, up half), silu(narrow(cat, gate half)))` becomes `fused_swiglu(cat)`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, mul: MulOp, rewriter: PatternRewriter) -> None:
        found = silu_and_other(mul)
        if found is None:
            return
        silu, up_value = found
        up = single_use_operand(up_value, NarrowOp, mul)
        gate = single_use_operand(silu.input, NarrowOp, silu)
        if up is None or gate is None:
            return
        gate_first = halves(up, gate)
        if gate_first is None:
            return
        e = Emitter.replacing(mul, rewriter).fused([up, gate, silu, mul])
        e.replace(mul, e.emit(FusedSwigluOp(up.input, gate_first=gate_first)))
        for dead in (silu, gate, up):
            rewriter.erase(dead)


@dataclass(frozen=True)
class FuseSwigluDualMatmulPass(ModulePass):
    """Fuse mul(x @ w_up, silu(x @ w_gate)) into fused_swiglu(x @ concat(w_up, w_gate)) (RLX's FuseSwiGLUDualMatmul).

    Both matmuls must be used only there, share x, have equal static rank-2
    weights, and the up matmul must come first.
    """

    name = "rlx-fuse-swiglu-dual-matmul"
    STATISTICS = (pattern_statistic(FuseSwigluDualMatmul),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseSwigluDualMatmul())


@dataclass(frozen=True)
class FuseSwigluPass(ModulePass):
    """Fuse mul(narrow(cat), silu(narrow(cat))) over the two halves of cat's last axis into
    fused_swiglu (RLX's FuseSwiGLU).

    The narrows and the silu must be used only there; gate_first when the silu reads the low half.
    """

    name = "rlx-fuse-swiglu"
    STATISTICS = (pattern_statistic(FuseSwiglu),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseSwiglu())
