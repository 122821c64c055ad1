"""Recipe of `hir.llama_decoder_block`: small heads, GQA and every mask kind."""

from __future__ import annotations

from rlx_xdsl.dialects.hir.blocks import LlamaDecoderBlockOp
from rlx_xdsl.testing.graphgen.hir.attention import mask_options
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import (
    divisors,
    element_type,
    floats_of_rank,
    shape_of,
)


@RECIPES.register(LlamaDecoderBlockOp)
def llama_decoder_block(s: GraphState, op: type) -> None:
    """x `[B, S, D]` (pool or new) and a layer's weights; cos and sin `[S, hd/2]`."""
    x = s.pick(floats_of_rank(3))
    if x is None:
        x = s.operand(s.shape(3, 3))
    batch, seq, dim = shape_of(x)
    et = element_type(x)
    heads = s.integer(1, 2)
    kv_heads, head_dim, ffn = s.choice(divisors(heads)), s.choice((2, 4)), s.integer(1, MAX_DIM)

    def param(*shape: int):
        return s.operand(shape, et, param=True)

    norm1 = (param(dim), param(dim))
    attn = (param(dim, heads * head_dim), param(dim, kv_heads * head_dim), param(dim, kv_heads * head_dim))
    out = param(heads * head_dim, dim)
    norm2 = (param(dim), param(dim))
    ffn_w = (param(dim, ffn), param(dim, ffn), param(ffn, dim))
    cos, sin = (s.operand((seq, head_dim // 2), et) for _ in range(2))
    mask, options = mask_options(s, batch, heads, seq, seq, et)
    s.emit(
        op, x, *norm1, *attn, out, *norm2, *ffn_w, cos, sin, mask,
        num_heads=heads, head_dim=head_dim, num_kv_heads=kv_heads, eps=1e-6, **options,
    )  # fmt: skip
