"""numpy semantics of the MIR fused ops, composed from the primitive kernels' formulas.

Each stage rounds to the dtype the unfused chain's op would give it, exactly
where that op would, so a fused op and its `rlx-unfuse` expansion compute the
same values bit for bit.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import fused
from rlx_xdsl.dialects.mir.elementwise import SiluOp, activation_op
from rlx_xdsl.interpreters.common import promoted, result_dtype
from rlx_xdsl.interpreters.mir.attention import rotate, run_attention
from rlx_xdsl.interpreters.mir.elementwise import UNARY
from rlx_xdsl.interpreters.mir.norm import affine, rms_scale, standardize
from rlx_xdsl.numerics import accumulate_matmul, convert, widened


def rounded(dtype: np.dtype, value: np.ndarray) -> np.ndarray:
    """`value` in `dtype`, as an intermediate op of that dtype would store it (rounded once)."""
    return convert(np.asarray(value), dtype)


def add(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`mir.add`: promote, add, round to the promoted dtype."""
    a, b = promoted(a, b)
    with np.errstate(all="ignore"):
        return rounded(a.dtype, a + b)


def matmul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """`mir.matmul`: promote, multiply (halves accumulate in f32), round to the promoted dtype."""
    a, b = promoted(a, b)
    return rounded(a.dtype, accumulate_matmul(a, b))


def linear(x: np.ndarray, w: np.ndarray, bias: np.ndarray | None) -> np.ndarray:
    """`x @ w (+ bias)` as `mir.matmul` then `mir.add`."""
    value = matmul(x, w)
    return value if bias is None else add(value, bias)


def activate(kind, x: np.ndarray) -> np.ndarray:
    """The activation kernel of `kind` applied to `x`, as `mir`'s activations run it: bools as
    the integers 0 and 1, halves in f32, one rounding to x's dtype."""
    work = x.astype(np.int8) if x.dtype.kind == "b" else widened(x)
    with np.errstate(all="ignore"):
        return rounded(x.dtype, UNARY[activation_op(kind)](work))


def run_fused_matmul_bias_act(op: fused.FusedMatmulBiasActOp, x, w, bias) -> tuple[np.ndarray]:
    value = linear(x, w, bias)
    return (value if op.kind is None else activate(op.kind, value),)


def swiglu_halves(x: np.ndarray, gate_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """`(up, gate)`: the low and high halves of the last axis, swapped when `gate_first`."""
    half = x.shape[-1] // 2
    low, high = x[..., :half], x[..., half:]
    return (high, low) if gate_first else (low, high)


def run_fused_swiglu(op: fused.FusedSwigluOp, x) -> tuple[np.ndarray]:
    up, gate = swiglu_halves(x, op.is_gate_first)
    with np.errstate(all="ignore"):
        product = rounded(x.dtype, activate(SiluOp.KIND, gate) * up)
    return (convert(product, result_dtype(op)),)


def _named(op, arrays) -> dict[str, np.ndarray | None]:
    """The operand arrays by operand definition name (None for an absent optional operand)."""
    it = iter(arrays)
    return {
        name: None if getattr(op, name) is None else next(it)
        for name, _ in type(op).get_irdl_definition().operands
    }


def residual_sum(x, residual, bias=None) -> np.ndarray:
    """`x + residual (+ bias)`, rounded after each add as the `mir.add` chain rounds."""
    total = add(x, residual)
    return total if bias is None else add(total, bias)


def _normalised_axes(op: fused.FusedResidualNormOperation, total: np.ndarray) -> tuple[int, ...]:
    return tuple(range(op.normalized_axis(), total.ndim))


def _residual_norm(op: fused.FusedResidualNormOperation, arrays, normalise) -> tuple[np.ndarray, ...]:
    """`normalise(x + residual (+ bias))` with gamma and beta applied; then the sum itself
    when the op keeps it (its second result)."""
    a = _named(op, arrays)
    total = residual_sum(a["x"], a["residual"], a["bias"])
    normalised = normalise(widened(total), _normalised_axes(op, total), op.eps.value.data)
    normed = affine(result_dtype(op), normalised, a["gamma"], a["beta"])
    return (normed, total) if op.keeps_sum else (normed,)


def run_fused_residual_rms_norm(op: fused.FusedResidualRmsNormOp, *arrays) -> tuple[np.ndarray, ...]:
    return _residual_norm(op, arrays, rms_scale)


def run_fused_residual_layer_norm(op: fused.FusedResidualLayerNormOp, *arrays) -> tuple[np.ndarray, ...]:
    return _residual_norm(op, arrays, standardize)


def _heads(x: np.ndarray, heads: int) -> np.ndarray:
    """`[B, S, heads*D] -> [B, heads, S, D]` (`reshape` + `transpose`)."""
    batch, seq, width = x.shape
    return x.reshape(batch, seq, heads, width // heads).transpose(0, 2, 1, 3)


def attention_block(op, hidden, qkv_w, out_w, mask=None, qkv_bias=None, out_bias=None, cos=None, sin=None):
    """`attention_block_chain` in numpy (`op` supplies the attention properties)."""
    heads, kv_heads, head_dim = op.num_heads.value.data, op.kv_heads(), op.head_dim.value.data
    qkv = linear(hidden, qkv_w, qkv_bias)
    q_end, k_end = heads * head_dim, (heads + kv_heads) * head_dim
    q = _heads(qkv[..., :q_end], heads)
    k, v = _heads(qkv[..., q_end:k_end], kv_heads), _heads(qkv[..., k_end:], kv_heads)
    if cos is not None:
        n_rot = op.n_rot.value.data if op.n_rot is not None else head_dim
        q, k = (rounded(x.dtype, rotate(x, cos, sin, n_rot)) for x in (q, k))
    (attended,) = run_attention(op, q, k, v, mask)
    batch, seq = hidden.shape[:2]
    merged = attended.transpose(0, 2, 1, 3).reshape(batch, seq, heads * head_dim)
    return linear(merged, out_w, out_bias)


def run_fused_attention_block(op: fused.FusedAttentionBlockOp, *arrays) -> tuple[np.ndarray]:
    return (attention_block(op, **_named(op, arrays)),)


def layer_norm_last(x: np.ndarray, gamma, beta, eps: float) -> np.ndarray:
    """`mir.layer_norm` over the last axis."""
    return affine(x.dtype, standardize(widened(x), (-1,), eps), gamma, beta)


def run_fused_transformer_layer(op: fused.FusedTransformerLayerOp, *arrays) -> tuple[np.ndarray]:
    a = _named(op, arrays)
    attention = {name: a[name] for name in ("hidden", "qkv_w", "out_w", "mask", "qkv_bias", "out_bias")}
    h = add(a["hidden"], attention_block(op, **attention))
    h = layer_norm_last(h, a["ln1_gamma"], a["ln1_beta"], op.eps1.value.data)
    up = activate(op.activation.data, linear(h, a["up_w"], a["up_bias"]))
    out = add(h, linear(up, a["down_w"], a["down_bias"]))
    return (layer_norm_last(out, a["ln2_gamma"], a["ln2_beta"], op.eps2.value.data),)


KERNELS = {
    fused.FusedMatmulBiasActOp: run_fused_matmul_bias_act,
    fused.FusedSwigluOp: run_fused_swiglu,
    fused.FusedResidualRmsNormOp: run_fused_residual_rms_norm,
    fused.FusedResidualLayerNormOp: run_fused_residual_layer_norm,
    fused.FusedAttentionBlockOp: run_fused_attention_block,
    fused.FusedTransformerLayerOp: run_fused_transformer_layer,
}
