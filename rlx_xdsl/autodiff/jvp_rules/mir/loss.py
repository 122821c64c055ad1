"""JVP rules of the softmax cross-entropy losses.

Per row, `loss = logsumexp(x) - sum(t * x)`: `d loss = sum((softmax(x) - t) * dx) - sum(x * dt)`.
The labelled form's targets are the one-hot rows of its labels (no tangent), and
rows labelled `ignore_index` have loss 0, so tangent 0: both follow
`rlx-lower-softmax-cross-entropy`'s expansion, pushed forward by the primitives' rules,
for the logits. The dense form's targets tangent is `-sum(x * dt)` written out, the
transpose of the reverse rule's `dt = -x g`: the expansion selects the classes whose
target is not 0 (a constant mask), which pushed a zero target's tangent through the
row max instead of its logit.
"""

from __future__ import annotations

from rlx_xdsl.autodiff.emit import add_tangents
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import jvp_of_expansion
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.loss import SoftmaxCrossEntropyOp, SoftmaxCrossEntropyWithLogitsOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.transforms.decompose_backward.emit import keep_where, scalar
from rlx_xdsl.transforms.lower_sce import lower_dense_loss, lower_indexed_loss


@JVP_RULES.register(SoftmaxCrossEntropyWithLogitsOp)
def sce_with_logits(e: Emitter, op: SoftmaxCrossEntropyWithLogitsOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, lower_indexed_loss)


@JVP_RULES.register(SoftmaxCrossEntropyOp)
def sce(e: Emitter, op: SoftmaxCrossEntropyOp, tangents: Tangents) -> OutTangents:
    t_logits, t_targets = tangents
    from_logits = t_logits and jvp_of_expansion(e, op, [t_logits, None], lower_dense_loss)[0]
    from_targets = None
    if t_targets is not None:
        moved = e.mir.compare(t_targets, scalar(e, 0.0, t_targets), "ne")  # no 0 * -inf of a still target
        weighted = keep_where(e, moved, e.mir.mul(e.mir.neg(op.logits), t_targets))
        from_targets = e.mir.reduce(weighted, kind="sum", axes=[1])
        element = tensor_type(op.result).element_type
        if tensor_type(from_targets).element_type != element:
            from_targets = e.mir.cast(from_targets, element)
    return [add_tangents(e, from_logits, from_targets)]
