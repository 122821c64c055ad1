"""Backward kernels, as JAX's reverse mode of the forward formulas (`jax.vjp`).

Each gradient op is the VJP of its forward op's formula here (layer norm, attention,
conv...), so it is an oracle independent of the closed forms the interpreter and the
decompositions use. The documented conventions where the forward is not
differentiable are applied on top: `sqrt`/`rsqrt` pass nothing for `x <= 0`, `round`
passes `dy` through, and max pooling sends each window's `dy` to its first maximum.
Two are closed forms instead, where the VJP's arithmetic gives other values on edge
inputs: the rms_norm input gradient (the VJP overflows in `rstd³`) and the conv input
gradient (`conv.transposed_conv`: the VJP multiplies inserted zeros by ±inf weights). The
rms_norm/layer_norm gamma gradients and the atan/tan activation gradients are written out
too, to round products that XLA's default optimisation level fuses into a sum in the VJP.
"""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax import attention as att_formulas
from rlx_xdsl.conversions.mir_to_jax import conv as conv_formulas
from rlx_xdsl.conversions.mir_to_jax import norm as norms
from rlx_xdsl.conversions.mir_to_jax.elementwise import ACTIVATIONS
from rlx_xdsl.conversions.mir_to_jax.indexing import scatter_rows
from rlx_xdsl.conversions.mir_to_jax.reduction import cumsum
from rlx_xdsl.conversions.mir_to_jax.registry import (
    JAX_OPS,
    one,
    over_sqrt,
    rounded,
    widen,
    with_op,
)
from rlx_xdsl.dialects.mir import backward as bw
from rlx_xdsl.dialects.mir.attrs import Activation, ReduceKind


def vjp(fn, primal, dy):
    """The VJP of `fn` at `primal` applied to `dy`."""
    _, pullback = jax.vjp(fn, primal)
    return pullback(dy.astype(fn(primal).dtype))[0]


SQUARED_DERIVATIVES = {
    Activation.ATAN: lambda x: 1 / (1 + rounded(x * x)),
    Activation.TAN: lambda x: 1 + rounded(jnp.tan(x) ** 2),
}
"""The derivatives whose JAX rule adds 1 to a square: written out with the square `rounded`
(XLA's default optimisation level fuses JAX's square into the add: `fma(x, x, 1)`)."""


def _activation_backward(op: bw.ActivationBackwardOp, x, dy):
    x, dy = widen(x), widen(dy)
    kind = op.activation
    if kind == Activation.ROUND:
        return dy
    if kind in SQUARED_DERIVATIVES:
        return dy * SQUARED_DERIVATIVES[kind](x)
    if kind in (Activation.SQRT, Activation.RSQRT):  # 0 for x <= 0, evaluated where finite
        positive = x > 0
        return jnp.where(positive, vjp(ACTIVATIONS[kind], jnp.where(positive, x, 1), dy), 0)
    # dy times the derivative, as the interpreter: an IEEE product keeps NaN (inf * 0) and
    # the sign of zero, where the VJP applied to dy may sum terms that lose them.
    return dy * vjp(ACTIVATIONS[kind], x, jnp.ones_like(dy))


JAX_OPS.add(bw.ReluBackwardOp, one(lambda x, dy: jnp.where(x > 0, dy, jnp.zeros_like(dy))))
JAX_OPS.add(bw.ActivationBackwardOp, with_op(_activation_backward))
JAX_OPS.add(bw.StopGradientOp, one(jax.lax.stop_gradient))


# Normalisations: the VJP of the forward with respect to x, or to a unit gamma.


def _axis(op, x) -> int:
    return op.normalized_axis(x.ndim)


def _axis_norm_input(forward):
    def formula(op, x, gamma, dy):
        x, gamma = widen(x), widen(gamma)
        beta = jnp.zeros((), x.dtype)
        return vjp(lambda x: forward(x, gamma, beta, _axis(op, x), op.eps.value.data), x, widen(dy))

    return with_op(formula)


def _axis_norm_gamma(normalised):
    """`sum(dy x_hat)` over the leading axes, `x_hat` the forward's normalised `x`: the
    closed form of the VJP, each product `rounded` before the sum reads it (the transposed
    product of the VJP is not, and XLA's default optimisation level fuses it into the sum)."""

    def formula(op, x, dy):
        x = widen(x)
        axis = _axis(op, x)
        x_hat = normalised(x, axis, op.eps.value.data)
        return jnp.sum(rounded(widen(dy) * x_hat), axis=tuple(range(axis)))

    return with_op(formula)


def _rms_norm_input(op: bw.RmsNormBackwardInputOp, x, gamma, dy):
    """`rstd (g - x_hat mean(g x_hat))` with `g = dy gamma`, `x_hat = x rstd` and
    `rstd = 1 / sqrt(mean(x²) + eps)` over the normalised axes: the interpreter's formula
    (the VJP of the forward multiplies out `rstd³`, which overflows on large rows where this
    does not), each product `rounded` before the sum that reads it."""
    x, gamma, dy = widen(x), widen(gamma), widen(dy)
    axes = tuple(range(_axis(op, x), x.ndim))
    rstd = over_sqrt(1, jnp.mean(rounded(x * x), axis=axes, keepdims=True) + op.eps.value.data)
    g, x_hat = rounded(dy * gamma), x * rstd
    return rstd * (g - rounded(x_hat * jnp.mean(rounded(g * x_hat), axis=axes, keepdims=True)))


def _leading_sum(op, dy):
    return jnp.sum(widen(dy), axis=tuple(range(_axis(op, dy))))


JAX_OPS.add(bw.LayerNormBackwardInputOp, _axis_norm_input(norms.layer_norm))
JAX_OPS.add(bw.LayerNormBackwardGammaOp, _axis_norm_gamma(norms.layer_normalised))
JAX_OPS.add(bw.RmsNormBackwardInputOp, with_op(_rms_norm_input))
JAX_OPS.add(bw.RmsNormBackwardGammaOp, _axis_norm_gamma(norms.rms_normalised))
JAX_OPS.add(bw.RmsNormBackwardBetaOp, with_op(_leading_sum))


def _group_norm(op, x, gamma):
    return norms.group_norm(x, gamma, jnp.zeros((), gamma.dtype), op.num_groups.value.data, op.eps.value.data)


def _group_norm_input(op: bw.GroupNormBackwardInputOp, x, gamma, dy):
    return vjp(lambda x: _group_norm(op, x, widen(gamma)), widen(x), widen(dy))


def _group_norm_gamma(op: bw.GroupNormBackwardGammaOp, x, dy):
    x = widen(x)
    return vjp(lambda g: _group_norm(op, x, g), jnp.ones(x.shape[1], x.dtype), widen(dy))


JAX_OPS.add(bw.GroupNormBackwardInputOp, with_op(_group_norm_input))
JAX_OPS.add(bw.GroupNormBackwardGammaOp, with_op(_group_norm_gamma))
JAX_OPS.add(
    bw.GroupNormBackwardBetaOp,
    one(lambda dy: jnp.sum(widen(dy), axis=(0, *range(2, dy.ndim)))),
)


# Heads.

JAX_OPS.add(
    bw.RopeBackwardOp,
    with_op(lambda op, dy, cos, sin: att_formulas.rope(dy, cos, sin, op.n_rot.value.data, inverse=True)),
)


def _attention_backward(op: bw.AttentionBackwardOp, q, k, v, dy, mask=None):
    position = {bw.AttentionWrt.QUERY: 0, bw.AttentionWrt.KEY: 1, bw.AttentionWrt.VALUE: 2}
    which = position[op.with_respect_to]
    primals = [widen(q), widen(k), widen(v)]

    def forward(t):
        args = primals[:which] + [t] + primals[which + 1 :]
        return att_formulas.attention(op, *args, mask)

    return vjp(forward, primals[which], widen(dy))


JAX_OPS.add(bw.AttentionBackwardOp, with_op(_attention_backward))


# Windows.


def _conv_backward_weight(op: bw.ConvBackwardWeightOp, x, dy):
    groups = op.groups.value.data
    w = jnp.zeros((dy.shape[1], x.shape[1] // groups, *op.pair("kernel_size")), widen(x).dtype)
    return vjp(lambda w: conv_formulas.conv(op, widen(x), w), w, widen(dy))


def _pool_backward(op: bw.PoolBackwardOp, x, dy):
    x, dy = widen(x), widen(dy)
    if op.kind.data != ReduceKind.MAX:
        return vjp(lambda x: conv_formulas.pool(op, x), x, dy)
    # Each window's dy goes to its first maximum (none where the maximum is NaN).
    kernel, stride = op.pair("kernel_size"), op.pair("stride")
    pads = ((0, 0), (0, 0), *((p, p) for p in op.pair("padding")))
    padded = jnp.pad(x, pads, constant_values=-jnp.inf)

    out = [(size - k) // s + 1 for size, k, s in zip(padded.shape[2:], kernel, stride)]

    def windows(p):  # [N, C, kh * kw, Ho, Wo], the window's cells in row-major order
        return jnp.stack(
            [
                jax.lax.slice(
                    p, (0, 0, di, dj),
                    (*p.shape[:2], di + (out[0] - 1) * stride[0] + 1, dj + (out[1] - 1) * stride[1] + 1),
                    (1, 1, *stride),
                )
                for di in range(kernel[0]) for dj in range(kernel[1])
            ],
            axis=2,
        )  # fmt: skip

    cells = windows(jax.lax.stop_gradient(padded))
    real = windows(jnp.pad(jnp.ones((1, 1, *x.shape[2:]), bool), pads))  # not a padding cell
    # The first real cell equal to the maximum of the real ones (a padding -inf ties with a
    # real -inf); none where the maximum is NaN.
    is_max = real & (cells == jnp.max(jnp.where(real, cells, -jnp.inf), axis=2, keepdims=True))
    first = jnp.argmax(is_max, axis=2)
    chosen = (jnp.arange(cells.shape[2])[:, None, None] == first[:, :, None]) & is_max
    spread = jnp.where(chosen, dy[:, :, None], 0)
    dpadded = vjp(windows, padded, spread)
    return dpadded[tuple(slice(lo, lo + size) for (lo, _), size in zip(pads, x.shape))]


JAX_OPS.add(
    bw.ConvBackwardInputOp, with_op(lambda op, dy, w: conv_formulas.transposed_conv(op, dy, w, op.pair("input_size")))
)
JAX_OPS.add(bw.ConvBackwardWeightOp, with_op(_conv_backward_weight))
JAX_OPS.add(bw.PoolBackwardOp, with_op(_pool_backward))


# Scans and indexing.

JAX_OPS.add(
    bw.CumsumBackwardOp,
    with_op(lambda op, dy: cumsum(dy, op.normalized_axis(), op.exclusive is not None, reverse=True)),
)
JAX_OPS.add(
    bw.GatherBackwardOp,
    with_op(lambda op, dy, i: scatter_rows(dy, i, op.dim_size.value.data, op.table_axis())),
)
