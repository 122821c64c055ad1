"""JVP rules of conv and pool.

A convolution is bilinear in input and weight: `conv(t_x, w) + conv(x, t_w)`. A
mean pool is linear; a max pool routes each window's tangent from its maximum,
through `rlx-legalize`'s primitive expansion (windows, then a reduce max, whose
rule averages the tangents of tied maxima, as the reduce's VJP rule does).
"""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import bilinear, jvp_of_expansion, linear
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms import primitive_rules

JVP_RULES.register(ConvOp)(bilinear)


@JVP_RULES.register(PoolOp)
def pool(e: Emitter, op: PoolOp, tangents: Tangents) -> OutTangents:
    if op.kind.data == "mean":
        return linear(e, op, tangents)
    return jvp_of_expansion(e, op, tangents, primitive_rules.pool)
