"""JVP rules of the norms: through their primitive definitions.

layer_norm and rms_norm follow `rlx-legalize`'s primitive expansion, group_norm
`rlx-lower-group-norm`'s (a layer_norm per group), batch_norm_inference its
formula `(x - mean) * rsqrt(var + eps) * gamma + beta` (per channel, axis 1):
the tangent flows through the statistics as well as through `x`, `gamma` and
`beta` (`jvp_of_expansion`).
"""

from __future__ import annotations

from functools import partial

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import scalar
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import jvp_of_expansion
from rlx_xdsl.dialects.mir.norm import BatchNormInferenceOp, GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.lower_logical_kernels import lower_group_norm
from rlx_xdsl.transforms.primitive_rules import axis_norm


@JVP_RULES.register(LayerNormOp)
def layer_norm(e: Emitter, op: LayerNormOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, partial(axis_norm, centred=True))


@JVP_RULES.register(RmsNormOp)
def rms_norm(e: Emitter, op: RmsNormOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, partial(axis_norm, centred=False))


@JVP_RULES.register(GroupNormOp)
def group_norm(e: Emitter, op: GroupNormOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, lower_group_norm)


def batch_norm_inference_expansion(e: Emitter, op: BatchNormInferenceOp) -> SSAValue:
    """`(x - mean) * rsqrt(var + eps) * gamma + beta`, the `[C]` values as `[C, 1, ...]`."""
    rank = op.x.type.get_num_dims()

    def per_channel(v: SSAValue) -> SSAValue:
        return e.mir.reshape(v, new_shape=[-1] + [1] * (rank - 2))

    r = e.mir.rsqrt(e.mir.add(op.var, scalar(e, op.eps.value.data, op.var)))
    scaled = e.mir.mul(e.mir.sub(op.x, per_channel(op.mean)), per_channel(e.mir.mul(r, op.gamma)))
    return e.mir.add(scaled, per_channel(op.beta))


@JVP_RULES.register(BatchNormInferenceOp)
def batch_norm_inference(e: Emitter, op: BatchNormInferenceOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, batch_norm_inference_expansion)
