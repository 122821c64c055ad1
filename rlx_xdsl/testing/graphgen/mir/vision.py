"""Recipes of the vision MIR ops: layer_norm_2d, resize_nearest_2x, axial_rope_2d,
conv_transpose_2d."""

from __future__ import annotations

from rlx_xdsl.dialects.mir.vision import AxialRope2dOp, ConvTranspose2dOp, LayerNorm2dOp, ResizeNearest2xOp
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.mir.conv import _nchw
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState
from rlx_xdsl.testing.graphgen.values import divisors, element_type, rank, shape_of


@RECIPES.register(LayerNorm2dOp)
def layer_norm_2d(s: GraphState, op: OpClass) -> None:
    x = _nchw(s)
    channels, et = shape_of(x)[1], element_type(x)
    gamma = s.operand((channels,), et, param=True)
    beta = s.operand((channels,), et, param=True)
    s.emit(op, x, gamma, beta, eps=s.choice((1e-5, 1e-6)))


@RECIPES.register(ResizeNearest2xOp)
def resize_nearest_2x(s: GraphState, op: OpClass) -> None:
    """Any rank-4 value, of any dtype."""
    x = s.pick(lambda v: rank(v) == 4) or s.operand(s.shape(4, 4))
    s.emit(op, x)


@RECIPES.register(AxialRope2dOp)
def axial_rope_2d(s: GraphState, op: OpClass) -> None:
    """A small grid, repeated or not, over heads of 4 or 8 channels."""
    end_x, end_y, repeat = s.integer(1, 2), s.integer(1, 2), s.integer(1, 2)
    heads, head_dim = s.integer(1, 2), s.choice((4, 8))
    x = s.operand((s.integer(1, 2), heads, end_x * end_y * repeat, head_dim))
    s.emit(
        op, x, end_x=end_x, end_y=end_y, head_dim=head_dim, num_heads=heads,
        theta=s.choice((100.0, 10000.0)), repeat_factor=repeat, inverse=s.flag(),
    )  # fmt: skip


@RECIPES.register(ConvTranspose2dOp)
def conv_transpose_2d(s: GraphState, op: OpClass) -> None:
    """Grouped when the channels allow; padding small enough for an output of at least 1."""
    x = _nchw(s)
    _, channels, height, width = shape_of(x)
    groups = s.choice(divisors(channels))
    options: dict[str, list[int]] = {"kernel_size": [], "stride": [], "padding": [], "output_padding": [], "dilation": []}
    for size in (height, width):
        kernel, stride, dilation = s.integer(1, 3), s.integer(1, 2), s.integer(1, 2)
        full = (size - 1) * stride + dilation * (kernel - 1)
        for name, value in zip(options, (kernel, stride, s.integer(0, min(1, full // 2)), s.integer(0, stride - 1), dilation)):
            options[name].append(value)
    w = s.operand((channels, s.integer(1, 2), *options["kernel_size"]), element_type(x), param=True)
    s.emit(op, x, w, groups=groups, **options)
