"""Losses: softmax cross-entropy with logits."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import loss


def _sce_with_logits(op, logits, labels):
    """Labels `[N]` or `[N, 1]`; rows labelled `ignore_index` give 0 (and no gradient)."""
    ids = labels.reshape(-1).astype(jnp.int32)
    onehot = jax.nn.one_hot(ids, logits.shape[1], dtype=logits.dtype)
    loss = jax.nn.logsumexp(logits, axis=1) - jnp.sum(onehot * logits, axis=1)
    ignore = op.ignored_label()
    return (
        loss if ignore is None else jnp.where(ids == ignore, jnp.zeros_like(loss), loss)
    )


JAX_OPS.add(loss.SoftmaxCrossEntropyWithLogitsOp, with_op(_sce_with_logits))
