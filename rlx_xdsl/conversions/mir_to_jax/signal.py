"""Complex values and signal ops: conjugate, |z|², FFT, log-mel."""

import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, with_op
from rlx_xdsl.dialects.mir import signal


def _fft(op: signal.FftOp, x):
    transform = jnp.fft.ifft if op.is_inverse else jnp.fft.fft
    norm = str(op.norm_kind)
    if jnp.iscomplexobj(x):
        return transform(x, axis=-1, norm=norm)
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    z = transform(pairs[..., 0] + 1j * pairs[..., 1], axis=-1, norm=norm)
    return jnp.stack([jnp.real(z), jnp.imag(z)], axis=-1).reshape(x.shape)


JAX_OPS.add(signal.ConjugateOp, one(jnp.conj))
JAX_OPS.add(signal.ComplexNormSqOp, one(lambda z: jnp.real(z) ** 2 + jnp.imag(z) ** 2))
JAX_OPS.add(signal.ComplexNormSqBackwardOp, one(lambda z, g: 2 * g * jnp.conj(z)))
JAX_OPS.add(signal.FftOp, with_op(_fft))
JAX_OPS.add(
    signal.LogMelOp,
    with_op(
        lambda op, s, w: jnp.log10(jnp.maximum(jnp.matmul(s, w), op.eps.value.data))
    ),
)


def _log_mel_backward(op: signal.LogMelBackwardOp, s, w, dy):
    m = jnp.matmul(s, w)
    passes = m >= op.eps.value.data  # clamped entries pass no gradient (and divide by nothing)
    g = jnp.where(passes, dy / (jnp.where(passes, m, 1) * jnp.log(10.0).astype(m.dtype)), 0)
    return jnp.matmul(g, jnp.swapaxes(w, -1, -2))


JAX_OPS.add(signal.LogMelBackwardOp, with_op(_log_mel_backward))
