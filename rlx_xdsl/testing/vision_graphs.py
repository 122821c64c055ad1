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

Shapes are small (the interpreter runs them in the tests); dtypes are f32.
"""

from __future__ import annotations

from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.builder import GraphBuilder

SLICES = 4
"""Images in `batch_preprocess`'s batch."""


def unet_decoder_block(channels: int = 4, out_channels: int = 8, size: int = 4) -> ModuleOp:
    """`@decoder(x [1, channels, size, size]) -> [1, out_channels, 2 size, 2 size]`."""
    b = GraphBuilder("decoder")
    x = b.input("x", [1, channels, size, size])
    w = b.param("w", [out_channels, channels, 3, 3])
    bias = b.param("bias", [out_channels, 1, 1])
    gamma, beta = b.param("gamma", [out_channels]), b.param("beta", [out_channels])
    w_skip = b.param("w_skip", [out_channels, channels, 1, 1])
    h = b.add(b.conv(b.resize_nearest_2x(x), w, kernel_size=[3, 3], padding=[1, 1]), bias)
    h = b.silu(b.group_norm(h, gamma, beta, num_groups=2))
    shortcut = b.resize_nearest_2x(b.conv(x, w_skip, kernel_size=[1, 1]))
    b.output(b.add(h, shortcut))
    return b.module()


def batch_preprocess(channels: int = 3, size: int = 8) -> ModuleOp:
    """`@preprocess(images [4, channels, size, size], masks [4, 1, size, size])`: both normalised per slice."""
    b = GraphBuilder("preprocess")
    images = b.input("images", [SLICES, channels, size, size])
    masks = b.input("masks", [SLICES, 1, size, size])
    mean, inv_std = b.param("mean", [channels, 1, 1]), b.param("inv_std", [channels, 1, 1])
    slices = [b.narrow(images, axis=0, start=i, len=1) for i in range(SLICES)]
    normalised = [b.tanh(b.mul(b.sub(s, mean), inv_std)) for s in slices]
    rectified = [b.relu(b.narrow(masks, axis=0, start=i, len=1)) for i in range(SLICES)]
    b.output(b.concat(*normalised, axis=0), b.concat(*rectified, axis=0))
    return b.module()
