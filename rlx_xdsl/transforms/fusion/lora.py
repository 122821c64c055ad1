"""`rlx-fuse-lora` (beyond RLX, which only unfuses LoRA): `x @ w + s · ((x @ a) @ b)`
becomes `mir.lora_matmul %x, %w, %a, %b scale = s`.

Either operand order of the `add` and of the `mul` matches; without a `mul` the scale is 1.
`s` is a scalar `mir.constant` that f32 (the type of `scale`) holds exactly. The three
matmuls share `x`, every intermediate value is used only in the chain, and the add
neither broadcasts nor promotes, so the fused op computes the same values (its kernel
rounds stage for stage as the chain does).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp, MulOp
from rlx_xdsl.dialects.mir.moe import LoraMatmulOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of
from rlx_xdsl.transforms.canonicalize import constant_elements
from rlx_xdsl.transforms.fusion.matching import apply_patterns, owner_if, used_once_by
from rlx_xdsl.transforms.statistics import pattern_statistic


def single_use_matmul(value: SSAValue, user) -> MatmulOp | None:
    owner = owner_if(value, MatmulOp)
    return owner if owner is not None and used_once_by(value, user) else None


def f32_scalar(value: SSAValue) -> float | None:
    """The number a scalar (one-element) constant holds, when f32 represents it exactly."""
    elements = constant_elements(value)
    # bf16 has numpy kind "V"; integers, bools and complex numbers are no scale.
    if elements is None or elements.size != 1 or elements.dtype.kind in "biuc":
        return None
    number = float(elements.astype(np.float64).reshape(()))
    return number if float(np.float32(number)) == number else None


@dataclass(frozen=True)
class Adapter:
    """The `s · ((x @ a) @ b)` side: its ops (in order) and the parts of the fused op."""

    ops: list
    x: SSAValue
    a: SSAValue
    b: SSAValue
    scale: float


def adapter_of(value: SSAValue, add: AddOp) -> Adapter | None:
    """`value` as `[mul by s of] (x @ a) @ b`, each link used only by the next."""
    scale, mul = 1.0, owner_if(value, MulOp)
    up_value = value
    if mul is not None:
        if not used_once_by(value, add):
            return None
        for product, factor in ((mul.lhs, mul.rhs), (mul.rhs, mul.lhs)):
            number = f32_scalar(factor)
            if number is not None and product.type == mul.result.type:
                scale, up_value = number, product
                break
        else:
            return None
    user = mul if mul is not None else add
    up = single_use_matmul(up_value, user)
    down = single_use_matmul(up.lhs, up) if up is not None else None
    if down is None:
        return None
    ops = [down, up] + ([mul] if mul is not None else [])
    return Adapter(ops, down.lhs, down.rhs, up.rhs, scale)


def is_matrix(value: SSAValue) -> bool:
    return len(shape_of(value.type)) == 2


class FuseLora(RewritePattern):
    """`add(x @ w, s · ((x @ a) @ b))`, in either order, becomes one `mir.lora_matmul`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, add: AddOp, rewriter: PatternRewriter) -> None:
        for base_value, adapter_value in ((add.lhs, add.rhs), (add.rhs, add.lhs)):
            base = single_use_matmul(base_value, add)
            adapter = adapter_of(adapter_value, add) if base is not None else None
            if adapter is None or adapter.x is not base.lhs:
                continue
            if not all(is_matrix(v) for v in (base.rhs, adapter.a, adapter.b)):
                continue
            if not (base_value.type == adapter_value.type == add.result.type):
                continue
            chain = [*adapter.ops, base, add]
            e = Emitter.replacing(add, rewriter).fused(chain)
            e.replace(add, e.emit(LoraMatmulOp(base.lhs, base.rhs, adapter.a, adapter.b, scale=adapter.scale)))
            for op in (base, *reversed(adapter.ops)):
                rewriter.erase(op)
            return


@dataclass(frozen=True)
class FuseLoraPass(ModulePass):
    """Fuse x @ w + s * ((x @ a) @ b) (either add order) into mir.lora_matmul (beyond RLX).

    s is a scalar constant f32 holds exactly (no mul: s = 1); the matmuls share x,
    w, a and b are matrices, every intermediate value is used only in the chain, and
    the add neither broadcasts nor promotes.
    """

    name = "rlx-fuse-lora"
    STATISTICS = (pattern_statistic(FuseLora),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, FuseLora())
