"""HIR model blocks: a whole LLaMA decoder layer as one op.

`hir.llama_decoder_block` takes RLX's 14 inputs (15 with a mask) and expands,
under both policies, to the primitive chain `rlx_xdsl.testing.llama` builds for
one layer: pre-norm grouped-query attention with RoPE, then a pre-norm SwiGLU
feed-forward, each with a residual.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    i64_attr,
    require,
    require_positive,
    require_rank,
)
from rlx_xdsl.dialects.hir.base import (
    HirOperation,
    float_operands,
    label_attributes,
    require_one_dynamic,
    require_shape,
)
from rlx_xdsl.dialects.hir.norm import LLAMA_EPS
from rlx_xdsl.dialects.mir.attention import AttentionOperation, MaskKind, MaskKindAttr
from rlx_xdsl.dialects.traits import COMPUTE, OperandRoles, Role
from rlx_xdsl.shapes import broadcast_shapes, broadcasts_to, fmt_shape, tensor

WEIGHTS = ("ln1_g", "ln1_b", "q_w", "k_w", "v_w", "o_w", "ln2_g", "ln2_b", "gate_w", "up_w", "down_w")
"""The block's parameters in operand order (after `x`, before `cos`, `sin` and the mask)."""


@irdl_op_definition
class LlamaDecoderBlockOp(AttentionOperation, HirOperation):
    """A pre-norm LLaMA decoder layer on `x[B, S, D]` (`HirOp::LlamaDecoderBlock`).

        h   = x + attention(rope(q), rope(k), v) @ o_w     q, k, v = rms_norm(x; ln1) @ q_w, k_w, v_w
        out = h + (silu(n @ gate_w) * (n @ up_w)) @ down_w     n = rms_norm(h; ln2)

    q_w is `[D, H*hd]`, k_w and v_w `[D, Hkv*hd]` (grouped-query attention: each
    of the `num_kv_heads` heads serves `num_heads / num_kv_heads` query heads),
    o_w `[H*hd, D]`, gate_w and up_w `[D, F]`, down_w `[F, D]`; cos and sin
    broadcast to `[B, H, S, hd/2]` (RoPE over the whole head). Heads are split
    with `reshape` + `transpose`, so at most one of B and S may be dynamic.
    """

    name = "hir.llama_decoder_block"
    x = operand_def(TensorType)
    ln1_g = operand_def(TensorType)
    ln1_b = operand_def(TensorType)
    q_w = operand_def(TensorType)
    k_w = operand_def(TensorType)
    v_w = operand_def(TensorType)
    o_w = operand_def(TensorType)
    ln2_g = operand_def(TensorType)
    ln2_b = operand_def(TensorType)
    gate_w = operand_def(TensorType)
    up_w = operand_def(TensorType)
    down_w = operand_def(TensorType)
    cos = operand_def(TensorType)
    sin = operand_def(TensorType)
    mask = opt_operand_def(TensorType)
    num_heads = prop_def(IntegerAttr[I64])
    head_dim = prop_def(IntegerAttr[I64])
    num_kv_heads = prop_def(IntegerAttr[I64])
    eps = prop_def(FloatAttr[Float32Type])
    mask_kind = prop_def(MaskKindAttr)
    window = opt_prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE, OperandRoles.of(mask=Role.MASK))
    assembly_format = (
        "$x `,` $ln1_g `,` $ln1_b `,` $q_w `,` $k_w `,` $v_w `,` $o_w `,` $ln2_g `,` $ln2_b `,` "
        "$gate_w `,` $up_w `,` $down_w `,` $cos `,` $sin (`,` $mask^)? "
        "`num_heads` `=` $num_heads `head_dim` `=` $head_dim `num_kv_heads` `=` $num_kv_heads "
        "`eps` `=` $eps `mask_kind` `=` $mask_kind (`window` `=` $window^)? " + FUNCTIONAL
    )
    DEFAULT_LABEL: ClassVar[str] = "llama_decoder_block"

    def __init__(
        self,
        x: SSAValue,
        ln1_g: SSAValue,
        ln1_b: SSAValue,
        q_w: SSAValue,
        k_w: SSAValue,
        v_w: SSAValue,
        o_w: SSAValue,
        ln2_g: SSAValue,
        ln2_b: SSAValue,
        gate_w: SSAValue,
        up_w: SSAValue,
        down_w: SSAValue,
        cos: SSAValue,
        sin: SSAValue,
        mask: SSAValue | None = None,
        *,
        num_heads: int,
        head_dim: int,
        num_kv_heads: int | None = None,
        eps: float = LLAMA_EPS,
        mask_kind: str | MaskKind = MaskKind.CAUSAL,
        window: int | None = None,
        label: str | None = None,
    ):
        operands = [x, ln1_g, ln1_b, q_w, k_w, v_w, o_w, ln2_g, ln2_b, gate_w, up_w, down_w, cos, sin]
        super().__init__(
            operands=[*operands, mask],
            properties={
                "num_heads": i64_attr(num_heads),
                "head_dim": i64_attr(head_dim),
                "num_kv_heads": i64_attr(num_heads if num_kv_heads is None else num_kv_heads),
                "eps": FloatAttr(eps, f32),
                "mask_kind": MaskKindAttr(MaskKind(mask_kind)),
                "window": None if window is None else i64_attr(window),
            },
            attributes=label_attributes(label),
        )

    @property
    def attn_logit_softcap(self) -> None:
        """The block's attention has no logit soft-cap (the shared checks ask)."""
        return None

    def heads(self) -> tuple[int, int, int]:
        """`(num_heads, num_kv_heads, head_dim)`."""
        return self.num_heads.value.data, self.num_kv_heads.value.data, self.head_dim.value.data

    def check_attributes(self) -> None:
        super().check_attributes()
        heads, kv_heads, head_dim = self.heads()
        require_positive(self, num_kv_heads=kv_heads)
        require(
            heads % kv_heads == 0,
            self,
            lambda: f"num_heads {heads} is not a multiple of num_kv_heads {kv_heads}",
        )
        require(head_dim % 2 == 0, self, lambda: f"head_dim must be even for RoPE, got {head_dim}")
        eps = self.eps.value.data
        require(eps > 0, self, lambda: f"eps must be positive, got {eps}")

    def infer_result_types(self) -> Sequence[Attribute]:
        types = float_operands(
            self, {"x": self.x, **{w: getattr(self, w) for w in WEIGHTS}, "cos": self.cos, "sin": self.sin}
        )
        x = types["x"]
        require_rank(self, x, 3, "x")
        batch, seq, dim = x.get_shape()
        require_one_dynamic(self, x.get_shape(), "x")
        heads, kv_heads, head_dim = self.heads()
        q_cols, kv_cols = heads * head_dim, kv_heads * head_dim
        for what in ("ln1_g", "ln1_b", "ln2_g", "ln2_b"):
            shape = types[what].get_shape()
            require(
                broadcasts_to(shape, (dim,)),
                self,
                lambda: f"{what} shape {fmt_shape(shape)} does not broadcast to the hidden dim {fmt_shape((dim,))}",
            )
        require_shape(self, types["q_w"], (dim, q_cols), "q_w")
        require_shape(self, types["k_w"], (dim, kv_cols), "k_w")
        require_shape(self, types["v_w"], (dim, kv_cols), "v_w")
        require_shape(self, types["o_w"], (q_cols, dim), "o_w")
        require_rank(self, types["gate_w"], 2, "gate_w")
        ffn = types["gate_w"].get_shape()[1]
        require_shape(self, types["gate_w"], (dim, ffn), "gate_w")
        require_shape(self, types["up_w"], (dim, ffn), "up_w")
        require_shape(self, types["down_w"], (ffn, dim), "down_w")
        for what in ("cos", "sin"):
            table = types[what].get_shape()
            for n in sorted({heads, kv_heads}):
                rotated = (batch, n, seq, head_dim // 2)
                require(
                    broadcasts_to(table, rotated),
                    self,
                    lambda: f"{what} shape {fmt_shape(table)} does not broadcast to {fmt_shape(rotated)}",
                )
        q = tensor(x.element_type, (batch, heads, seq, head_dim))
        self.check_mask(q, q)
        attn_out = (batch, seq, types["o_w"].get_shape()[1])
        ffn_out = (batch, seq, types["down_w"].get_shape()[1])
        return [tensor(x.element_type, broadcast_shapes(x.get_shape(), attn_out, ffn_out))]


OPS = [LlamaDecoderBlockOp]
