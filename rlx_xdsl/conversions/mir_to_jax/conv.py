"""Convolution and pooling."""

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, widen, with_op
from rlx_xdsl.dialects.mir import conv as conv_ops
from rlx_xdsl.dialects.mir.attrs import ReduceKind


def conv(op, x, w):
    """`op`'s convolution (NCHW, OIHW weights); `op` gives the window properties."""
    pads = [(p, p) for p in op.pair("padding")]
    return jax.lax.conv_general_dilated(
        x, w, window_strides=op.pair("stride"), padding=pads, rhs_dilation=op.pair("dilation"),
        feature_group_count=op.groups.value.data, dimension_numbers=("NCHW", "OIHW", "NCHW"),
    )  # fmt: skip


def transposed_conv(op, dy, w, size: tuple[int, int]):
    """The transposed convolution of `dy` (`[N, Cout, Ho, Wo]`) with `w` (the forward conv's
    `[Cout, Cin / groups, kh, kw]`) into `size` (H, W), f16/bf16 in f32: each window cell's
    value `dy · w` (per group, summed over Cout), added tap by tap, in row-major tap order,
    into the padded grid (interior padding puts cell (a, b) of window (i, j) at
    `(i sh + a dh, j sw + b dw)`), the padding cropped. Only real products are summed, as the
    interpreter's `transposed_conv` (docs/mir.md): the conv of dy spread out by the stride
    (JAX's VJP of the conv) multiplies the inserted and padding zeros by the weights, NaN
    where a weight is ±inf or NaN."""
    dy, w = widen(dy), widen(w)
    groups = op.groups.value.data
    n, cout, ho, wo = dy.shape
    _, per_group, kh, kw = w.shape
    dy_g = dy.reshape(n, groups, cout // groups, ho, wo)
    w_g = w.reshape(groups, cout // groups, per_group, kh, kw)
    cells = jnp.einsum("ngohw,gocab->ngchwab", dy_g, w_g).reshape(n, groups * per_group, ho, wo, kh, kw)
    (sh, sw), (dh, dw) = op.pair("stride"), op.pair("dilation")
    grid = [s + 2 * p for s, p in zip(size, op.pair("padding"))]
    out = jnp.zeros((n, groups * per_group, *grid), cells.dtype)
    zero = jnp.zeros((), cells.dtype)
    for a in range(kh):
        for b in range(kw):
            rows = (a * dh, grid[0] - a * dh - (ho - 1) * sh - 1, sh - 1)
            cols = (b * dw, grid[1] - b * dw - (wo - 1) * sw - 1, sw - 1)
            out = out + jax.lax.pad(cells[..., a, b], zero, ((0, 0, 0), (0, 0, 0), rows, cols))
    (ph, pw), (h, width) = op.pair("padding"), size
    return out[:, :, ph : ph + h, pw : pw + width]


def pool(op, x):
    """`op`'s max or mean pooling (padded cells are not counted by the mean)."""
    window = (1, 1, *op.pair("kernel_size"))
    strides = (1, 1, *op.pair("stride"))
    pads = ((0, 0), (0, 0), *((p, p) for p in op.pair("padding")))
    if op.kind.data == ReduceKind.MAX:
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, window, strides, pads)
    total = jax.lax.reduce_window(x, 0.0, jax.lax.add, window, strides, pads)
    count = jax.lax.reduce_window(
        jnp.ones_like(x), 0.0, jax.lax.add, window, strides, pads
    )
    return total / count  # padded cells are not counted


JAX_OPS.add(conv_ops.ConvOp, with_op(conv))
JAX_OPS.add(conv_ops.PoolOp, with_op(pool))
