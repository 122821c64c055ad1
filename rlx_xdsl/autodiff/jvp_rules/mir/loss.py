"""JVP rules of the softmax cross-entropy losses.

Per row, `loss = logsumexp(x) - sum(t * x)`: `d loss = sum((softmax(x) - t) * dx) - sum(x * dt)`.
The labelled form's targets are the one-hot rows of its labels (no tangent), and
rows labelled `ignore_index` have loss 0, so tangent 0: both follow
`rlx-lower-softmax-cross-entropy`'s expansion, pushed forward by the primitives' rules.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import jvp_of_expansion
from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyOp, SoftmaxCrossEntropyWithLogitsOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.transforms.lower_sce import lower_dense_loss, lower_indexed_loss


@JVP_RULES.register(SoftmaxCrossEntropyWithLogitsOp)
def sce_with_logits(e: Emitter, op: SoftmaxCrossEntropyWithLogitsOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, lower_indexed_loss)


@JVP_RULES.register(SoftmaxCrossEntropyOp)
def sce(e: Emitter, op: SoftmaxCrossEntropyOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, lower_dense_loss)
