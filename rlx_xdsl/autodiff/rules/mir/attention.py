"""VJP rules of attention and rope."""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import unbroadcast
from rlx_xdsl.autodiff.registry import VJP_RULES, Cotangents, Gradient, Gradients
from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.ir.emitter import Emitter


@VJP_RULES.register(AttentionOp)
def attention(e: Emitter, op: AttentionOp, cotangents: Cotangents) -> Gradients:
    """Three `attention_backward` kernels (wrt query, key, value) with every forward property.

    The kernels honour the mask, window, `score_scale`, soft-cap and grouped KV
    heads (RLX's rule drops the scale and the soft-cap). The mask carries no
    gradient (its role is MASK).
    """
    (g,) = cotangents
    props = {
        "num_heads": op.num_heads.value.data,
        "head_dim": op.head_dim.value.data,
        "mask_kind": op.kind,
        "window": None if op.window is None else op.window.value.data,
        "score_scale": None if op.score_scale is None else op.score_scale.value.data,
        "attn_logit_softcap": None if op.attn_logit_softcap is None else op.attn_logit_softcap.value.data,
    }
    grads: list[Gradient] = [
        lambda wrt=wrt: e.mir.attention_backward(op.q, op.k, op.v, g, op.mask, wrt=wrt, **props)
        for wrt in ("query", "key", "value")
    ]
    return [*grads, None] if op.mask is not None else grads


def _halves(e: Emitter, value: SSAValue, half: int) -> tuple[SSAValue, SSAValue]:
    """The two rotated halves `[..., :half]` and `[..., half:2 half]` of the last axis."""
    return (
        e.mir.narrow(value, axis=-1, start=0, len=half),
        e.mir.narrow(value, axis=-1, start=half, len=half),
    )


@VJP_RULES.register(RopeOp)
def rope(e: Emitter, op: RopeOp, cotangents: Cotangents) -> Gradients:
    """x: `rope_backward` (the inverse rotation); cos and sin: from the rotated halves.

    With `x1, x2` and `g1, g2` the halves of x and g, `out1 = x1 cos - x2 sin` and
    `out2 = x2 cos + x1 sin` give `dcos = g1 x1 + g2 x2` and `dsin = g2 x1 - g1 x2`,
    summed over whatever cos and sin were broadcast along. RLX's rule only
    returns dx; the tables are usually inputs, and these ops are then dropped.
    """
    (g,) = cotangents
    head_dim, n_rot = op.head_dim.value.data, op.n_rot.value.data

    def d_table(sign: str) -> SSAValue:
        x1, x2 = _halves(e, op.x, n_rot // 2)
        g1, g2 = _halves(e, g, n_rot // 2)
        if sign == "cos":
            return unbroadcast(e, e.mir.add(e.mir.mul(g1, x1), e.mir.mul(g2, x2)), op.cos)
        return unbroadcast(e, e.mir.sub(e.mir.mul(g2, x1), e.mir.mul(g1, x2)), op.sin)

    return [
        lambda: e.mir.rope_backward(g, op.cos, op.sin, head_dim=head_dim, n_rot=n_rot),
        lambda: d_table("cos"),
        lambda: d_table("sin"),
    ]
