"""`scaled_dot_product_attention` -> `mir.attention` (kept whole by the importer's decompositions)."""

from __future__ import annotations

import torch

from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


@rule(aten.scaled_dot_product_attention.default)
def sdpa(t, node):
    names = ("query", "key", "value", "attn_mask", "dropout_p", "is_causal", "scale")
    args = dict(zip(names, node.args)) | dict(node.kwargs)
    q, k, v = args["query"], args["key"], args["value"]
    if args.get("dropout_p", 0.0):
        raise t.fail("attention dropout is not supported (export the model in eval mode)")
    if t.rank(q) != 4:
        raise t.fail(f"attention needs [B, H, S, D] operands, got rank {t.rank(q)}")
    _, heads, sq, head_dim = t.shape(q)
    sk = t.shape(k)[2]
    if t.shape(v)[3] != head_dim:
        raise t.fail("a value head width different from the query's is not supported")
    mask, kind = args.get("attn_mask"), "none"
    mask_value = None
    if args.get("is_causal"):
        if mask is not None:
            raise t.fail("is_causal with an attn_mask is not supported")
        if DYNAMIC in (sq, sk) or sq != sk:
            raise t.fail("causal attention with query and key lengths that may differ is not supported")
        kind = "causal"
    elif mask is not None:
        kind = "bias"
        dtype = t.dtype(q)
        if t.dtype(mask) == "i1":  # True attends: bias 0 there, -inf elsewhere
            mask_value = t.e.mir.where(t.value(mask), t.value(0.0, dtype), t.value(float("-inf"), dtype))
        else:
            mask_value = t.value(mask, dtype)
    return t.e.mir.attention(
        t.value(q),
        t.value(k),
        t.value(v),
        mask_value,
        num_heads=heads,
        head_dim=head_dim,
        mask_kind=kind,
        score_scale=args.get("scale"),
    )
