"""HIR mixture-of-experts block: a sparse SwiGLU feed-forward (Mixtral, Qwen-MoE).

`hir.moe_swiglu` routes every token of `x[B, S, D]` to `top_k` of `num_experts`
SwiGLU experts and sums their outputs weighted by the router's probabilities,
as the Hugging Face Mixtral sparse-MoE block (Jiang et al. 2024, arXiv:2401.04088):
softmax over all experts, top-k, and (with `normalize_top_k`) the k weights
renormalised to sum to one. The experts run through `mir.grouped_matmul`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import FUNCTIONAL, i64_attr, require, require_positive, require_rank
from rlx_xdsl.dialects.hir.base import (
    HirOperation,
    float_operands,
    label_attributes,
    require_one_dynamic,
    require_shape,
)
from rlx_xdsl.dialects.traits import COMPUTE
from rlx_xdsl.shapes import DYNAMIC, tensor


@irdl_op_definition
class MoeSwigluOp(HirOperation):
    """A sparse mixture of SwiGLU experts on `x[B, S, D]`.

        p        = softmax(x @ router_w)                    router_w [D, E]
        w, e     = topk(p, top_k)                           w /= sum(w) with normalize_top_k
        out[t]   = sum_j w[t, j] * expert_{e[t, j]}(x[t])
        expert_i(v) = (silu(v @ w_gate[i]) * (v @ w_up[i])) @ w_down[i]

    w_gate and w_up are `[E, D, F]`, w_down `[E, F, D]`, with `E = num_experts`.
    Tokens are flattened with one `reshape`, so at most one of B and S may be
    dynamic, and D must be static.
    """

    name = "hir.moe_swiglu"
    x = operand_def(TensorType)
    router_w = operand_def(TensorType)
    w_gate = operand_def(TensorType)
    w_up = operand_def(TensorType)
    w_down = operand_def(TensorType)
    num_experts = prop_def(IntegerAttr[I64])
    top_k = prop_def(IntegerAttr[I64])
    normalize_top_k = opt_prop_def(UnitAttr)
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)
    assembly_format = (
        "$x `,` $router_w `,` $w_gate `,` $w_up `,` $w_down `num_experts` `=` $num_experts "
        "`top_k` `=` $top_k (`normalize_top_k` $normalize_top_k^)? " + FUNCTIONAL
    )
    DEFAULT_LABEL: ClassVar[str] = "moe_swiglu"

    def __init__(
        self,
        x: SSAValue,
        router_w: SSAValue,
        w_gate: SSAValue,
        w_up: SSAValue,
        w_down: SSAValue,
        *,
        num_experts: int,
        top_k: int,
        normalize_top_k: bool = True,
        label: str | None = None,
    ):
        super().__init__(
            operands=[x, router_w, w_gate, w_up, w_down],
            properties={
                "num_experts": i64_attr(num_experts),
                "top_k": i64_attr(top_k),
                "normalize_top_k": UnitAttr() if normalize_top_k else None,
            },
            attributes=label_attributes(label),
        )

    def routing(self) -> tuple[int, int, bool]:
        """`(num_experts, top_k, normalize_top_k)`."""
        return self.num_experts.value.data, self.top_k.value.data, self.normalize_top_k is not None

    def check_attributes(self) -> None:
        experts, k, _ = self.routing()
        require_positive(self, num_experts=experts, top_k=k)
        require(k <= experts, self, lambda: f"top_k {k} exceeds num_experts {experts}")

    def infer_result_types(self) -> Sequence[Attribute]:
        names = ("x", "router_w", "w_gate", "w_up", "w_down")
        types = float_operands(self, {n: getattr(self, n) for n in names})
        x = types["x"]
        require_rank(self, x, 3, "x")
        require_one_dynamic(self, x.get_shape(), "x")
        dim = x.get_shape()[2]
        require(dim != DYNAMIC, self, "the hidden dim of x must be static (the lowering flattens the tokens)")
        experts = self.routing()[0]
        require_shape(self, types["router_w"], (dim, experts), "router_w")
        require_rank(self, types["w_gate"], 3, "w_gate")
        ffn = types["w_gate"].get_shape()[2]
        require_shape(self, types["w_gate"], (experts, dim, ffn), "w_gate")
        require_shape(self, types["w_up"], (experts, dim, ffn), "w_up")
        require_shape(self, types["w_down"], (experts, ffn, dim), "w_down")
        return [tensor(x.element_type, x.get_shape())]


OPS = [MoeSwigluOp]
