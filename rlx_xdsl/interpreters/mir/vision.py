"""numpy semantics of the MIR vision ops: layer_norm_2d, resize_nearest_2x,
axial_rope_2d, conv_transpose_2d."""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import TensorType

from rlx_xdsl.dialects.mir import vision
from rlx_xdsl.interpreters.common import as_result, result_dtype, widened
from rlx_xdsl.interpreters.mir.backward import transposed_conv
from rlx_xdsl.interpreters.mir.norm import affine, standardize
from rlx_xdsl.numerics import convert


def run_layer_norm_2d(op: vision.LayerNorm2dOp, x, gamma, beta) -> tuple[np.ndarray]:
    normalised = standardize(widened(x), (1,), op.eps.value.data)
    return (affine(result_dtype(op), normalised, gamma, beta, (x.shape[1], 1, 1)),)


def run_resize_nearest_2x(op: vision.ResizeNearest2xOp, x) -> tuple[np.ndarray]:
    return (x.repeat(2, axis=2).repeat(2, axis=3),)


def axial_angles(end_x: int, end_y: int, head_dim: int, theta: float) -> np.ndarray:
    """`[end_x * end_y, head_dim / 2]` f64 rotation angles of each grid token and channel pair:
    the first quarter of the channels' pairs turn with the x position, the rest with y."""
    quarter = head_dim // 4
    freqs = theta ** (-(4.0 * np.arange(quarter)) / head_dim)
    t = np.arange(end_x * end_y)
    x_pos, y_pos = (t % end_x).astype(np.float64), (t // end_x).astype(np.float64)
    return np.concatenate([np.outer(x_pos, freqs), np.outer(y_pos, freqs)], axis=-1)


def rope_tables(op: vision.AxialRope2dOp) -> tuple[np.ndarray, np.ndarray]:
    """cos and sin of the op's angles (negated for `inverse`), repeated along L, in f64."""
    end_x, end_y, head_dim, repeat = op.ints("end_x", "end_y", "head_dim", "repeat_factor")
    angles = axial_angles(end_x, end_y, head_dim, op.theta.value.data)
    if op.inverse is not None:
        angles = -angles
    angles = np.tile(angles, (repeat, 1))
    return np.cos(angles), np.sin(angles)


def run_axial_rope_2d(op: vision.AxialRope2dOp, x) -> tuple[np.ndarray]:
    wide = widened(x)
    cos, sin = (t.astype(wide.dtype) for t in rope_tables(op))
    pairs = wide.reshape(*x.shape[:-1], -1, 2)
    real, imag = pairs[..., 0], pairs[..., 1]
    out = np.stack([real * cos - imag * sin, real * sin + imag * cos], axis=-1)
    return (convert(out.reshape(x.shape), result_dtype(op)),)


def run_conv_transpose_2d(op: vision.ConvTranspose2dOp, x, w) -> tuple[np.ndarray]:
    size = op.output_size(TensorType(op.x.type.element_type, list(x.shape)))  # run-time dims, `?` or not
    return (as_result(op, transposed_conv(op, x, w, tuple(size))),)


KERNELS = {
    vision.LayerNorm2dOp: run_layer_norm_2d,
    vision.ResizeNearest2xOp: run_resize_nearest_2x,
    vision.AxialRope2dOp: run_axial_rope_2d,
    vision.ConvTranspose2dOp: run_conv_transpose_2d,
}
