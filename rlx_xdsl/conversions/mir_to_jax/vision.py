"""Vision ops on NCHW images: channel layer norm, 2x nearest upsampling, SAM 2's axial
rope, transposed convolution (`conv.transposed_conv`)."""

import jax.numpy as jnp
import numpy as np

from rlx_xdsl.conversions.mir_to_jax import conv as conv_formulas
from rlx_xdsl.conversions.mir_to_jax import norm as norms
from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, one, rounded, widen, with_op
from rlx_xdsl.dialects.mir import vision


def _layer_norm_2d(op: vision.LayerNorm2dOp, x, gamma, beta):
    channels_last = jnp.moveaxis(x, 1, -1)
    return jnp.moveaxis(norms.layer_norm(channels_last, gamma, beta, x.ndim - 1, op.eps.value.data), -1, 1)


def _axial_angles(op: vision.AxialRope2dOp, length: int) -> np.ndarray:
    """`[L, head_dim / 2]` rotation angles in f64 (static: they depend on properties only)."""
    end_x, end_y, head_dim = op.ints("end_x", "end_y", "head_dim")
    t = np.arange(length) % (end_x * end_y)
    pos = np.stack([t % end_x, t // end_x]).astype(np.float64)  # x, y positions
    quarter = head_dim // 4
    pair = np.arange(head_dim // 2)
    freq = float(op.theta.value.data) ** (-4.0 * (pair % quarter) / head_dim)
    angles = pos[(pair >= quarter).astype(int)].T * freq  # [L, head_dim / 2]
    return -angles if op.inverse is not None else angles


def _axial_rope_2d(op: vision.AxialRope2dOp, x):
    x = widen(x)
    angles = _axial_angles(op, x.shape[2])
    cos, sin = (jnp.asarray(f(angles), x.dtype) for f in (np.cos, np.sin))
    pairs = x.reshape(*x.shape[:-1], -1, 2)
    a, b = pairs[..., 0], pairs[..., 1]
    ac, bs, as_, bc = (rounded(p) for p in (a * cos, b * sin, a * sin, b * cos))
    return jnp.stack([ac - bs, as_ + bc], axis=-1).reshape(x.shape)


def _conv_transpose_2d(op: vision.ConvTranspose2dOp, x, w):
    """The transposed convolution of x (`[N, Cin, H, W]`) into the op's output size."""
    size = [
        (h - 1) * s - 2 * p + d * (k - 1) + extra + 1
        for h, s, p, d, k, extra in zip(
            x.shape[2:], op.pair("stride"), op.pair("padding"), op.pair("dilation"),
            op.pair("kernel_size"), op.pair("output_padding"),
        )
    ]  # fmt: skip
    return conv_formulas.transposed_conv(op, x, w, tuple(size))


JAX_OPS.add(vision.LayerNorm2dOp, with_op(_layer_norm_2d))
JAX_OPS.add(vision.ResizeNearest2xOp, one(lambda x: jnp.repeat(jnp.repeat(x, 2, axis=2), 2, axis=3)))
JAX_OPS.add(vision.AxialRope2dOp, with_op(_axial_rope_2d))
JAX_OPS.add(vision.ConvTranspose2dOp, with_op(_conv_transpose_2d))
