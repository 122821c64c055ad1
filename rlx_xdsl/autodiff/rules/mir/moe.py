"""VJP rules of the mixture-of-experts ops.

`lora_matmul` has none on purpose: like the fused ops, `rlx-prepare-ad` expands it
through its `rlx-unfuse` rule and the matmuls' rules give dx, dw, da and db (RLX's
`prepare_graph_for_ad` does the same).

`grouped_matmul`'s rule keeps M symbolic (RLX requires it static): dx is another
grouped matmul, by the transposed expert weights; dw is `xᵀ g` with the rows of the other
experts masked out, one batched `[E, K, M] @ [M, N]` matmul (or `[K, M] @ [E, M, N]`,
masking the smaller of x and g): no per-token `[M, K, N]` outer products (RLX gathers
them and `scatter_add`s). The expert ids get no gradient.

`dequant_grouped_matmul` is straight through to x as `dequant_matmul`: dx is a grouped
matmul by the decoded weights, transposed; the quantised weights, scales and zero
points get none. `dequant_moe_weights` has no gradient: its operands are codes and the
scales `dequant_matmul` gives none either (RLX has no rule for it).
"""

from __future__ import annotations

from xdsl.dialects.builtin import IntegerType, i64
from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.registry import (
    VJP_RULES,
    Cotangents,
    Gradients,
    Unsupported,
    no_gradient,
)
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.moe import (
    DequantGroupedMatmulOp,
    DequantMoeWeightsOp,
    GroupedMatmulOp,
)
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.unfuse_rules.moe import decoded_expert_weights


def expert_mask(e: Emitter, expert: SSAValue, experts: int) -> SSAValue:
    """`[E, M]` i1: true where row m uses expert e (float ids truncated, as the kernel)."""
    ids = expert
    if not isinstance(tensor_type(ids).element_type, IntegerType):
        ids = e.mir.cast(ids, i64)
    ramp = e.mir.iota([experts, 1], tensor_type(ids).element_type, dimension=0)
    return e.mir.compare(e.mir.reshape(ids, new_shape=[1, -1]), ramp, "eq")


@VJP_RULES.register(GroupedMatmulOp)
def grouped_matmul(e: Emitter, op: GroupedMatmulOp, cotangents: Cotangents) -> Gradients:
    """`dx[m] = g[m] @ w[e_m]ᵀ`, `dw[e] = Σ_{m: e_m = e} x[m]ᵀ g[m] = xᵀ (mask_e · g)`."""
    (g,) = cotangents
    experts, k, n = tensor_type(op.w).get_shape()
    if DYNAMIC in (experts, k, n):
        raise Unsupported("the expert weights' shape [E, K, N] must be static to size dw")
    dx = e.mir.grouped_matmul(g, e.mir.transpose(op.w, perm=[0, 2, 1]), op.expert)
    mask = expert_mask(e, op.expert, experts)
    zero = e.mir.constant(0.0, tensor_type(op.x).element_type)
    xt = e.mir.transpose(op.x, perm=[1, 0])  # [K, M]
    if k <= n:  # mask x (a select, so an inf in one expert's rows stays out of the others'): [E, K, M] @ [M, N]
        rows = e.mir.where(e.mir.reshape(mask, new_shape=[experts, 1, -1]), e.mir.reshape(xt, new_shape=[1, k, -1]), zero)
        dw = e.mir.matmul(rows, g)
    else:  # mask g: [K, M] @ [E, M, N]
        rows = e.mir.where(e.mir.reshape(mask, new_shape=[experts, -1, 1]), e.mir.reshape(g, new_shape=[1, -1, n]), zero)
        dw = e.mir.matmul(xt, rows)
    return [dx, dw, None]


@VJP_RULES.register(DequantGroupedMatmulOp)
def dequant_grouped_matmul(e: Emitter, op: DequantGroupedMatmulOp, cotangents: Cotangents) -> Gradients:
    """x: `dx[m] = g[m] @ W[e_m]ᵀ`; the quantised operands and the ids: none."""
    (g,) = cotangents

    def dx():
        x = tensor_type(op.x)
        weights = decoded_expert_weights(e, op, x.element_type, x.get_shape()[1])
        return e.mir.grouped_matmul(g, e.mir.transpose(weights, perm=[0, 2, 1]), op.expert)

    return [dx, None, None, None, None]


VJP_RULES.register(DequantMoeWeightsOp)(no_gradient)
