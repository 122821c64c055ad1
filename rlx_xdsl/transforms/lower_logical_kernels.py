"""`rlx-lower-group-norm` and `rlx-lower-resize-nearest-2x`: two "logical kernels" as
primitive MIR, for backends without a native kernel (RLX's `LowerGroupNorm` and
`LowerResizeNearest2x`, which `lower_logical_kernels` applies).

* group_norm: `x[N, C, S...]` viewed as `[N, G, (C / G) * prod(S)]`, a `layer_norm` over
  the last axis (gamma 1, beta 0), viewed back, then `* gamma + beta` per channel.
* resize_nearest_2x: `x[N, C, H, W]` viewed as `[N, C, H, 1, W, 1]`, expanded to
  `[N, C, H, 2, W, 2]` and viewed as `[N, C, 2H, 2W]`: each pixel becomes a 2x2 block.
  (RLX concatenates the image with itself along H and W, which tiles it instead;
  see docs/deviations.md.)

`rlx-legalize` also uses two rules without a pass of their own: layer_norm_2d as a
`layer_norm` between transposes, conv_transpose_2d as `conv_backward_input`.

The views are `mir.reshape`s, which infer at most one `?` dim: an op with more than one
`?` dim is reported at its location.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.norm import GroupNormOp
from rlx_xdsl.dialects.mir.vision import ConvTranspose2dOp, LayerNorm2dOp, ResizeNearest2xOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape
from rlx_xdsl.transforms.rewriting import apply_patterns
from rlx_xdsl.transforms.statistics import pattern_statistic

LOGICAL_KERNELS = (GroupNormOp, ResizeNearest2xOp, LayerNorm2dOp, ConvTranspose2dOp)
"""The ops lowered here: the dispatch report's "common IR" path."""


def spelled(op: Operation, shape: Sequence[int]) -> list[int]:
    """`shape` as a `new_shape` property: its one `?` dim as -1; more are refused."""
    if list(shape).count(DYNAMIC) > 1:
        raise OpError(
            op,
            f"'{op.name}' cannot be lowered: shape {fmt_shape(shape)} has more than one dynamic dim "
            "(mir.reshape infers at most one)",
        )
    return [-1 if d == DYNAMIC else d for d in shape]


def lower_resize_nearest_2x(e: Emitter, op: ResizeNearest2xOp) -> SSAValue:
    n, c, h, w = tensor_type(op.input).get_shape()
    blocks = e.mir.reshape(op.input, new_shape=spelled(op, [n, c, h, 1, w, 1]))
    spread = e.mir.expand(blocks, target_shape=[-1, -1, -1, 2, -1, 2])
    return e.mir.reshape(spread, new_shape=spelled(op, tensor_type(op.result).get_shape()))


def lower_group_norm(e: Emitter, op: GroupNormOp) -> SSAValue:
    x = tensor_type(op.x)
    n, channels, *spatial = x.get_shape()
    groups = op.num_groups.value.data
    rest = [channels, *spatial]
    per_group = DYNAMIC if DYNAMIC in rest else channels // groups * _product(spatial)
    grouped = e.mir.reshape(op.x, new_shape=spelled(op, [n, groups, per_group]))
    one, zero = (e.mir.constant([value], x.element_type) for value in (1.0, 0.0))
    normalised = e.mir.layer_norm(grouped, one, zero, axis=2, eps=op.eps.value.data)
    back = e.mir.reshape(normalised, new_shape=spelled(op, x.get_shape()))
    per_channel = [-1] + [1] * len(spatial)
    gamma, beta = (e.mir.reshape(v, new_shape=per_channel) for v in (op.gamma, op.beta))
    return e.mir.add(e.mir.mul(back, gamma), beta)


def _product(dims: Sequence[int]) -> int:
    result = 1
    for d in dims:
        result *= d
    return result


def lower_layer_norm_2d(e: Emitter, op: LayerNorm2dOp) -> SSAValue:
    """A `layer_norm` over the last axis of the NHWC permutation, permuted back."""
    nhwc = e.mir.transpose(op.x, perm=[0, 2, 3, 1])
    normalised = e.mir.layer_norm(nhwc, op.gamma, op.beta, axis=-1, eps=op.eps.value.data)
    return e.mir.transpose(normalised, perm=[0, 3, 1, 2])


def lower_conv_transpose_2d(e: Emitter, op: ConvTranspose2dOp) -> SSAValue:
    """`conv_backward_input` of the output size (whose decomposition is a conv)."""
    size = tensor_type(op.result).get_shape()[2:]
    if DYNAMIC in size:
        raise OpError(op, f"'{op.name}' cannot be lowered: output height and width {fmt_shape(size)} must be static")
    props = {name: list(op.pair(name)) for name in ("kernel_size", "stride", "padding", "dilation")}
    return e.mir.conv_backward_input(op.x, op.w, input_size=list(size), groups=op.groups.value.data, **props)


class LowerLayerNorm2d(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LayerNorm2dOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_layer_norm_2d(e, op))


class LowerConvTranspose2d(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvTranspose2dOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_conv_transpose_2d(e, op))


class LowerResizeNearest2x(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ResizeNearest2xOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_resize_nearest_2x(e, op))


class LowerGroupNorm(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GroupNormOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, lower_group_norm(e, op))


@dataclass(frozen=True)
class LowerResizeNearest2xPass(ModulePass):
    """Rewrite mir.resize_nearest_2x as reshape, expand, reshape (each pixel a 2x2 block)."""

    name = "rlx-lower-resize-nearest-2x"

    STATISTICS = (pattern_statistic(LowerResizeNearest2x),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, LowerResizeNearest2x())


@dataclass(frozen=True)
class LowerGroupNormPass(ModulePass):
    """Rewrite mir.group_norm as a layer_norm over each group, then the per-channel affine."""

    name = "rlx-lower-group-norm"

    STATISTICS = (pattern_statistic(LowerGroupNorm),)

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        apply_patterns(op, LowerGroupNorm())
