"""Fused ops: each is the formula of the primitive chain it stands for."""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax import attention as att
from rlx_xdsl.conversions.mir_to_jax import norm as norms
from rlx_xdsl.conversions.mir_to_jax.elementwise import activation, convert
from rlx_xdsl.conversions.mir_to_jax.registry import (
    JAX_OPS,
    narrow_precision,
    narrow_product,
    operands_of,
    result_dtype,
)
from rlx_xdsl.dialects.mir import fused


def linear(x, w, bias=None):
    """`x @ w (+ bias)`, rounded to x's dtype at each stage as the chain's ops do."""
    y = jnp.matmul(x, w.astype(x.dtype), preferred_element_type=narrow_product(x), precision=narrow_precision(x))
    y = y.astype(x.dtype)
    return y if bias is None else (y + bias).astype(jnp.result_type(y, bias))


def _matmul_bias_act(op: fused.FusedMatmulBiasActOp, x, w, bias, **_):
    y = linear(x, w, bias)
    return (activation(op.kind, y).astype(result_dtype(op)),)


def _swiglu(op: fused.FusedSwigluOp, x, **_):
    half = x.shape[-1] // 2
    low, high = x[..., :half], x[..., half:]
    gate, up = (low, high) if op.is_gate_first else (high, low)
    product = (activation("silu", gate).astype(x.dtype) * up).astype(x.dtype)
    return (convert(product, result_dtype(op)),)


def _residual_norm(forward):
    def formula(op: fused.FusedResidualNormOperation, *arrays, **_):
        get = operands_of(op, arrays)
        total = get(op.x) + get(op.residual)
        if op.bias is not None:
            total = total + get(op.bias)
        total = total.astype(result_dtype(op))
        normed = forward(total, get(op.gamma), get(op.beta), op.normalized_axis(), op.eps.value.data)
        normed = normed.astype(result_dtype(op))
        return (normed, total) if op.keeps_sum else (normed,)

    return formula


def _split_heads(x, heads: int, head_dim: int):
    """`[B, S, heads*D] -> [B, heads, S, D]`."""
    return jnp.transpose(x.reshape(*x.shape[:2], heads, head_dim), (0, 2, 1, 3))


def attention_block(
    op, hidden, qkv_w, out_w, mask=None, qkv_bias=None, out_bias=None, cos=None, sin=None, kv_heads=None
):
    """qkv projection, head split, rope on q and k, attention, head merge, output projection."""
    heads, head_dim = op.num_heads.value.data, op.head_dim.value.data
    kv_heads = heads if kv_heads is None else kv_heads
    qkv = linear(hidden, qkv_w, qkv_bias)
    widths = (heads * head_dim, kv_heads * head_dim, kv_heads * head_dim)
    starts = (0, widths[0], widths[0] + widths[1])
    q, k, v = (
        _split_heads(qkv[..., s : s + w], w // head_dim, head_dim) for s, w in zip(starts, widths)
    )
    if cos is not None:
        n_rot = op.n_rot.value.data if op.n_rot is not None else head_dim
        q, k = (att.rope(t, cos, sin, n_rot).astype(t.dtype) for t in (q, k))
    out = att.attention(op, q, k, v, mask).astype(q.dtype)
    merged = jnp.transpose(out, (0, 2, 1, 3)).reshape(*hidden.shape[:2], heads * head_dim)
    return linear(merged, out_w, out_bias)


def _attention_block(op: fused.FusedAttentionBlockOp, *arrays, **_):
    get = operands_of(op, arrays)
    result = attention_block(
        op, get(op.hidden), get(op.qkv_w), get(op.out_w), get(op.mask), get(op.qkv_bias),
        get(op.out_bias), get(op.cos), get(op.sin), kv_heads=op.kv_heads(),
    )  # fmt: skip
    return (result.astype(result_dtype(op)),)


def _transformer_layer(op: fused.FusedTransformerLayerOp, *arrays, **_):
    """Post-norm: `h = LN1(x + attn(x))`, `LN2(h + down(act(up(h))))`."""
    get = operands_of(op, arrays)
    x = get(op.hidden)
    attended = attention_block(
        op, x, get(op.qkv_w), get(op.out_w), get(op.mask), get(op.qkv_bias), get(op.out_bias)
    )
    h = norms.layer_norm(x + attended, get(op.ln1_gamma), get(op.ln1_beta), 2, op.eps1.value.data)
    h = h.astype(x.dtype)
    up = activation(op.activation.data, linear(h, get(op.up_w), get(op.up_bias))).astype(x.dtype)
    down = linear(up, get(op.down_w), get(op.down_bias))
    out = norms.layer_norm(h + down, get(op.ln2_gamma), get(op.ln2_beta), 2, op.eps2.value.data)
    return (out.astype(result_dtype(op)),)


JAX_OPS.add(fused.FusedMatmulBiasActOp, _matmul_bias_act)
JAX_OPS.add(fused.FusedSwigluOp, _swiglu)
JAX_OPS.add(fused.FusedResidualRmsNormOp, _residual_norm(norms.rms_norm))
JAX_OPS.add(fused.FusedResidualLayerNormOp, _residual_norm(norms.layer_norm))
JAX_OPS.add(fused.FusedAttentionBlockOp, _attention_block)
JAX_OPS.add(fused.FusedTransformerLayerOp, _transformer_layer)
