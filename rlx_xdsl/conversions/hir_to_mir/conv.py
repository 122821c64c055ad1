"""Lowering of `hir.depthwise_conv1d_causal` to a grouped 2-D convolution (both policies)."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.hir_to_mir.registry import LOWERINGS, Policy
from rlx_xdsl.dialects.hir.conv import DepthwiseConv1dCausalOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, shape_of


def reshape_dim(dim: int) -> int:
    """A dim of a `mir.reshape` target: `-1` (inferred) where the type has `?`."""
    return -1 if dim == DYNAMIC else dim


@LOWERINGS.register(DepthwiseConv1dCausalOp)
def lower_depthwise_conv1d_causal(
    e: Emitter, op: DepthwiseConv1dCausalOp, policy: Policy
) -> Sequence[SSAValue]:
    """Prepend the left context, view `[B, C, S+K-1]` as a `[B, C, 1, S+K-1]` image, and run a
    `[1, K]` convolution with one group per channel; then back to `[B, S, C]` (RLX's `hir/conv.rs`)."""
    batch, seq, channels = shape_of(op.result.type)
    kernel = op.kernel_size.value.data
    padded_seq = DYNAMIC if seq == DYNAMIC else seq + kernel - 1
    padded = e.mir.concat(op.left_pad, op.x, axis=1)
    channels_first = e.mir.transpose(padded, perm=[0, 2, 1])
    image = e.mir.reshape(
        channels_first, new_shape=[reshape_dim(batch), channels, 1, reshape_dim(padded_seq)]
    )
    conv = e.mir.conv(image, op.w, kernel_size=[1, kernel], groups=channels)
    rows = e.mir.reshape(conv, new_shape=[reshape_dim(batch), channels, reshape_dim(seq)])
    return [e.mir.transpose(rows, perm=[0, 2, 1])]
