"""JVP rules of attention and rope.

Attention's tangent is that of its primitive definition (`rlx-legalize`'s
expansion: scores, scale, soft-cap, mask, softmax, `@ v`), so it depends on q,
k, v and the mask. RLX's forward rule returns `attention(t_q, k, v)`, which is
not the derivative (attention is not linear in q, and k and v are ignored).
Rope is linear in x for fixed tables: `rope(t_x, cos, sin)`; a tangent of the
tables goes through the primitive rotation.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import apply_to, jvp_of_expansion
from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms import primitive_rules


@JVP_RULES.register(AttentionOp)
def attention(e: Emitter, op: AttentionOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, primitive_rules.attention)


@JVP_RULES.register(RopeOp)
def rope(e: Emitter, op: RopeOp, tangents: Tangents) -> OutTangents:
    t_x, t_cos, t_sin = tangents
    if t_cos is None and t_sin is None:
        return apply_to(e, op, [t_x, op.cos, op.sin])
    return jvp_of_expansion(e, op, tangents, primitive_rules.rope)
