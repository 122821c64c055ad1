"""Vision graphs for RLX's FK fusion regions, shared by the tests and `benchmarks/fusion.py`.

* `unet_decoder_block()`: a U-Net-style decoder block, upsample -> conv -> norm ->
  activation, with a 1x1-projected shortcut upsampled to the output's resolution:
  `silu(group_norm(conv3x3(up(x)) + bias)) + up(conv1x1(x))`, `up` the 2x nearest resize.
  The main path's resize feeds the conv (a `mir.transform_region`); the shortcut's feeds
  the residual add (a region prologue).
* `batch_preprocess()`: the pre-processing of a batch of 4 images, slice by slice:
  each `narrow(images, axis 0, i, 1)` is normalised `(x - mean) * inv_std`, clipped by a
  `tanh`, and the 4 slices are concatenated back (one `mir.batch_elementwise_region`),
  and a second batch whose slices only go through a `relu` (RLX's `narrow -> unary`
  slices, `rlx-mark-batch-slice-regions`).
* `batch_preprocess_upsampled()`: the same normalisation of 4 half-resolution image slices,
  each upsampled 2x first (`narrow -> resize_nearest_2x -> (x - mean) * inv_std -> tanh`):
  one `mir.batch_elementwise_region` whose prologue reads each slice upsampled.

`decoder_block` and `preprocess` build the same into a caller's builder; `vision_blocks(n)`
has `n` of each (the compile-time benchmark's workload for these passes).

Shapes are small (the interpreter runs them in the tests); dtypes are f32.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import tensor_type

SLICES = 4
"""Images in `batch_preprocess`'s batch."""


def decoder_block(b: GraphBuilder, x: SSAValue, out_channels: int = 8, prefix: str = "") -> SSAValue:
    """`silu(group_norm(conv3x3(up(x)) + bias)) + up(conv1x1(x))` on `x [N, C, H, W]` -> `[N, out_channels, 2H, 2W]`."""
    channels = tensor_type(x).get_shape()[1]
    w = b.param(f"{prefix}w", [out_channels, channels, 3, 3])
    bias = b.param(f"{prefix}bias", [out_channels, 1, 1])
    gamma, beta = b.param(f"{prefix}gamma", [out_channels]), b.param(f"{prefix}beta", [out_channels])
    w_skip = b.param(f"{prefix}w_skip", [out_channels, channels, 1, 1])
    h = b.add(b.conv(b.resize_nearest_2x(x), w, kernel_size=[3, 3], padding=[1, 1]), bias)
    h = b.silu(b.group_norm(h, gamma, beta, num_groups=2))
    return b.add(h, b.resize_nearest_2x(b.conv(x, w_skip, kernel_size=[1, 1])))


def preprocess(b: GraphBuilder, images: SSAValue, masks: SSAValue, prefix: str = "") -> tuple[SSAValue, SSAValue]:
    """Normalise `images [4, C, H, W]` and rectify `masks [4, 1, H, W]` slice by slice."""
    channels = tensor_type(images).get_shape()[1]
    mean, inv_std = b.param(f"{prefix}mean", [channels, 1, 1]), b.param(f"{prefix}inv_std", [channels, 1, 1])
    slices = [b.narrow(images, axis=0, start=i, len=1) for i in range(SLICES)]
    normalised = [b.tanh(b.mul(b.sub(s, mean), inv_std)) for s in slices]
    rectified = [b.relu(b.narrow(masks, axis=0, start=i, len=1)) for i in range(SLICES)]
    return b.concat(*normalised, axis=0), b.concat(*rectified, axis=0)


def unet_decoder_block(channels: int = 4, out_channels: int = 8, size: int = 4) -> ModuleOp:
    """`@decoder(x [1, channels, size, size]) -> [1, out_channels, 2 size, 2 size]`."""
    b = GraphBuilder("decoder")
    b.output(decoder_block(b, b.input("x", [1, channels, size, size]), out_channels))
    return b.module()


def batch_preprocess(channels: int = 3, size: int = 8) -> ModuleOp:
    """`@preprocess(images [4, channels, size, size], masks [4, 1, size, size])`: both normalised per slice."""
    b = GraphBuilder("preprocess")
    images, masks = b.input("images", [SLICES, channels, size, size]), b.input("masks", [SLICES, 1, size, size])
    b.output(*preprocess(b, images, masks))
    return b.module()


def batch_preprocess_upsampled(channels: int = 3, size: int = 4) -> ModuleOp:
    """`@preprocess_up(images [4, channels, size, size]) -> [4, channels, 2 size, 2 size]`: each
    slice upsampled 2x, then normalised."""
    b = GraphBuilder("preprocess_up")
    images = b.input("images", [SLICES, channels, size, size])
    mean, inv_std = b.param("mean", [channels, 1, 1]), b.param("inv_std", [channels, 1, 1])
    slices = [b.resize_nearest_2x(b.narrow(images, axis=0, start=i, len=1)) for i in range(SLICES)]
    b.output(b.concat(*(b.tanh(b.mul(b.sub(s, mean), inv_std)) for s in slices), axis=0))
    return b.module()


def vision_blocks(n: int) -> ModuleOp:
    """`@vision`: `n` independent decoder blocks and `n` batch pre-processings (a workload that grows with `n`)."""
    b = GraphBuilder("vision")
    outputs = []
    for i in range(n):
        outputs.append(decoder_block(b, b.input(f"x{i}", [1, 4, 4, 4]), prefix=f"d{i}_"))
        images, masks = b.input(f"images{i}", [SLICES, 3, 8, 8]), b.input(f"masks{i}", [SLICES, 1, 8, 8])
        outputs.extend(preprocess(b, images, masks, prefix=f"p{i}_"))
    b.output(*outputs)
    return b.module()
