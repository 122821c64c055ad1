"""JVP rules of the mixture-of-experts and LoRA ops.

* lora_matmul `x w + s (x a) b`: linear in x (the op itself on t_x), and the product
  rule in w, a and b (the reverse mode expands it through `rlx-unfuse` instead);
* grouped_matmul: bilinear in x and the expert weights; the expert ids get none;
* dequant_grouped_matmul: linear in x, straight through the quantised weights as its
  reverse rule (the codes, scales and zero points get no tangent);
* dequant_moe_weights: zero tangent (its reverse rule gives none).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import add_tangents, scalar
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents, zero_tangent
from rlx_xdsl.autodiff.jvp_rules.common import linear_in, linear_rule
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.ir.emitter import Emitter


@JVP_RULES.register(LoraMatmulOp)
def lora_matmul(e: Emitter, op: LoraMatmulOp, tangents: Tangents) -> OutTangents:
    """`lora(t_x, w, a, b) + x t_w + s ((x t_a) b + (x a) t_b)`."""
    _, t_w, t_a, t_b = tangents
    adapter = add_tangents(
        e,
        t_a and e.mir.matmul(e.mir.matmul(op.x, t_a), op.b),
        t_b and e.mir.matmul(e.mir.matmul(op.x, op.a), t_b),
    )
    scaled = adapter and e.mir.mul(adapter, scalar(e, op.scale_value, op.x))
    return [add_tangents(e, linear_in(e, op, tangents, 0), t_w and e.mir.matmul(op.x, t_w), scaled)]


JVP_RULES.register(GroupedMatmulOp)(linear_rule(0, 1))
JVP_RULES.register(DequantGroupedMatmulOp)(linear_rule(0))
JVP_RULES.register(DequantMoeWeightsOp)(zero_tangent)
