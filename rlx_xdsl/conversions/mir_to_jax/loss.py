"""Softmax cross-entropy: indexed and dense losses, and the indexed gradient.

Each row computes in f32 for f16/bf16 logits. Labels are `[N]` or `[N, 1]`
class indices (floats truncate toward zero; NaN or out-of-range selects no class).
"""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.dialects.mir import loss


def logsumexp(x, axis: int = -1):
    """`max + log(sum(exp(x - max)))`: NaN for a row holding NaN or +inf, or only -inf."""
    m = jax.lax.stop_gradient(jnp.max(x, axis=axis, keepdims=True))
    return jnp.squeeze(m, axis) + jnp.log(jnp.sum(jnp.exp(x - m), axis=axis))


def _labels(labels, classes: int):
    """`(one-hot [N, C] bool, truncated labels [N] as f64)`."""
    t = jnp.trunc(labels.reshape(-1).astype(jnp.float64))
    iota = jax.lax.broadcasted_iota(jnp.float64, (t.shape[0], classes), 1)
    return iota == t[:, None], t


def _ignored(op, t):
    ignore = op.ignored_label()
    return jnp.zeros(t.shape, bool) if ignore is None else t == ignore


def _with_logits(op, logits, labels):
    logits = widen(logits)
    onehot, t = _labels(labels, logits.shape[1])
    loss_ = logsumexp(logits) - jnp.sum(jnp.where(onehot, logits, 0), axis=1)
    return jnp.where(_ignored(op, t), jnp.zeros_like(loss_), loss_)


def _dense(op, logits, targets):
    logits, targets = widen(logits), widen(targets)
    # A zero target ignores its logit, even -inf (also in the gradient: no 0 * inf).
    unused = targets == 0
    picked = jnp.where(unused, 0, targets * jnp.where(unused, 0, logits))
    return logsumexp(logits) - jnp.sum(picked, axis=1)


def _backward(op, logits, labels, d_loss):
    logits = widen(logits)
    onehot, t = _labels(labels, logits.shape[1])
    grad = (jax.nn.softmax(logits, axis=1) - onehot) * widen(d_loss).reshape(-1, 1)
    return jnp.where(_ignored(op, t)[:, None], jnp.zeros_like(grad), grad)


JAX_OPS.add(loss.SoftmaxCrossEntropyWithLogitsOp, with_op(_with_logits))
JAX_OPS.add(loss.SoftmaxCrossEntropyOp, with_op(_dense))
JAX_OPS.add(loss.SoftmaxCrossEntropyBackwardOp, with_op(_backward))
