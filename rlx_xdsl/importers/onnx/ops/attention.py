"""Attention (opset 23) -> `mir.attention`.

Both apply a softcap to the scaled scores before any mask and give zeros for a fully
masked row. ONNX's causal query `i` sees keys `j <= i + past length` (the keys cached in
`past_key`); `mir.attention`'s `causal` sees `j <= i + Sk - Sq`. They agree when the
current K is as long as Q; otherwise the causal frontier becomes an explicit bias.
3-D inputs `[B, S, H * D]` are split into heads (`q_num_heads`, `kv_num_heads`) and the
output is merged back; `past_key` / `past_value` are concatenated in front of K and V,
which are also the `present_*` outputs.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


def _heads(t, x, heads: int | None, what: str):
    """`[B, S, H * D]` -> `[B, H, S, D]`; 4-D inputs are already in heads."""
    if t.rank(x) == 4:
        return x
    if heads is None:
        raise t.fail(f"a 3-D {what} needs the {what[0].lower()}_num_heads attribute")
    b, s, width = t.shape(x)
    shape = [-1 if d == DYNAMIC else d for d in (b, s)] + [heads, width // heads]
    if shape.count(-1) > 1:
        raise t.fail("3-D attention inputs with several dynamic dims are not supported")
    return t.e.mir.transpose(t.e.mir.reshape(x, new_shape=shape), perm=[0, 2, 1, 3])


@rule("Attention")
def attention(t, node):
    if len(node.output) > 3 and node.output[3]:
        raise t.fail("the qk_matmul_output output is not supported")
    q_in = t.value(0)
    q = _heads(t, q_in, t.attr("q_num_heads"), "Query")
    k = _heads(t, t.value(1), t.attr("kv_num_heads"), "Key")
    v = _heads(t, t.value(2), t.attr("kv_num_heads"), "Value")
    past = t.shape(t.value(4))[2] if t.input(4) is not None else 0
    if t.input(4) is not None:
        k = t.e.mir.concat(t.value(4), k, axis=2)
    if t.input(5) is not None:
        v = t.e.mir.concat(t.value(5), v, axis=2)
    _, heads, sq, head_dim = t.shape(q)
    sk = t.shape(k)[2]
    if t.shape(v)[3] != head_dim:
        raise t.fail("a value head width different from the query's is not supported")
    dtype = t.dtype(q)
    bias = None
    if t.input(3) is not None:
        mask = t.value(3)
        if t.dtype(mask) == "i1":
            bias = t.e.mir.where(mask, t.constant(0, dtype), t.constant(float("-inf"), dtype))
        else:
            bias = t.e.mir.cast(mask, dtype) if t.dtype(mask) != dtype else mask
    kind = "none"
    if t.attr("is_causal", 0):
        if bias is None and DYNAMIC not in (sq, sk, past) and sk - sq == past:
            kind = "causal"
        elif DYNAMIC in (sq, sk, past):
            raise t.fail("a causal mask over dynamic lengths is not supported here")
        else:  # the frontier as a bias, added to the mask's
            i, j = np.indices((sq, sk))
            causal = t.constant(np.where(j <= i + past, 0.0, -np.inf), dtype)
            bias = causal if bias is None else t.e.mir.add(bias, causal)
    if bias is not None:
        kind = "bias"
    softcap = t.attr("softcap", 0.0)
    out = t.e.mir.attention(
        q,
        k,
        v,
        bias,
        num_heads=heads,
        head_dim=head_dim,
        mask_kind=kind,
        score_scale=t.attr("scale"),
        attn_logit_softcap=softcap if softcap else None,
    )
    if t.rank(q_in) == 3:
        b, s, _ = t.shape(q_in)
        merged = [-1 if d == DYNAMIC else d for d in (b, s)] + [heads * head_dim]
        out = t.e.mir.reshape(t.e.mir.transpose(out, perm=[0, 2, 1, 3]), new_shape=merged)
    present = (k, v) if t.input(4) is not None else (None, None)
    return [out, *present]
