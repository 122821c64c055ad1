"""VJP rules of the mixture-of-experts ops.

`lora_matmul` has none on purpose: like the fused ops, `rlx-prepare-ad` expands it
through its `rlx-unfuse` rule and the matmuls' rules give dx, dw, da and db (RLX's
`prepare_graph_for_ad` does the same).

`grouped_matmul`'s rule keeps M symbolic (RLX requires it static): dx is another
grouped matmul, by the transposed expert weights; dw sums each row's outer product
`x[m]ᵀ g[m]` into its expert with `scatter_add`. The expert ids get no gradient.

`dequant_grouped_matmul` is straight through to x as `dequant_matmul`: dx is a grouped
matmul by the decoded weights, transposed; the quantised weights, scales and zero
points get none. `dequant_moe_weights` has no gradient: its operands are codes and the
scales `dequant_matmul` gives none either (RLX has no rule for it).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradients, Unsupported, no_gradient
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.unfuse_rules.moe import decoded_expert_weights


@VJP_RULES.register(GroupedMatmulOp)
def grouped_matmul(e: Emitter, op: GroupedMatmulOp, cotangents: Cotangents) -> Gradients:
    """`dx[m] = g[m] @ w[e_m]ᵀ`, `dw[e] = Σ_{m: e_m = e} x[m]ᵀ g[m]`."""
    (g,) = cotangents
    experts, k, n = tensor_type(op.w).get_shape()
    if DYNAMIC in (experts, k, n):
        raise Unsupported("the expert weights' shape [E, K, N] must be static to size dw")
    dx = e.mir.grouped_matmul(g, e.mir.transpose(op.w, perm=[0, 2, 1]), op.expert)
    outer = e.mir.matmul(e.mir.reshape(op.x, new_shape=[-1, k, 1]), e.mir.reshape(g, new_shape=[-1, 1, n]))
    dw = e.mir.scatter_add(outer, op.expert, dim_size=experts)
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
