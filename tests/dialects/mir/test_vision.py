"""Vision MIR ops against PyTorch (`F.layer_norm` on NHWC, `F.interpolate`,
`F.conv_transpose2d` with autograd) and SAM 2's axial RoPE written with complex numbers."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
import torch
import torch.nn.functional as F

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import vision
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_op

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-vision.mlir"
test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
RNG = np.random.default_rng(7)


def normal(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def test_layer_norm_2d_is_torch_layer_norm_over_channels():
    x, g, b = normal(2, 5, 3, 4) * 3 + 1, normal(5), normal(5)
    out = run_op("layer_norm_2d", [x, g, b], eps=1e-6)
    t = [torch.from_numpy(a) for a in (x, g, b)]
    ref = F.layer_norm(t[0].permute(0, 2, 3, 1), (5,), t[1], t[2], 1e-6).permute(0, 3, 1, 2)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, ml_dtypes.bfloat16])
def test_resize_nearest_2x_is_torch_nearest_interpolation(dtype):
    x = (normal(2, 3, 2, 3) * 4).astype(dtype)
    out = run_op("resize_nearest_2x", [x])
    ref = F.interpolate(torch.from_numpy(x.astype(np.float32)), scale_factor=2, mode="nearest").numpy()
    assert out.dtype == x.dtype and out.shape == (2, 3, 4, 6)
    np.testing.assert_array_equal(out.astype(np.float32), ref)


def test_resize_nearest_2x_repeats_pixels_rather_than_tiling_the_image():
    """RLX's lowering concatenates the image with itself (tiling); each pixel must become a block."""
    x = np.arange(4, dtype=np.float32).reshape(1, 1, 2, 2)
    out = run_op("resize_nearest_2x", [x])
    np.testing.assert_array_equal(out[0, 0], [[0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]])


def sam2_axial_rope(x: np.ndarray, end_x: int, end_y: int, theta: float, repeat: int) -> np.ndarray:
    """SAM 2's `compute_axial_cis` and `apply_rotary_enc` (Ravi et al. 2024), in complex128."""
    dim = x.shape[-1]
    freqs = 1.0 / (theta ** (np.arange(0, dim, 4)[: dim // 4] / dim))
    t = np.arange(end_x * end_y)
    cis = np.concatenate(
        [np.exp(1j * np.outer(t % end_x, freqs)), np.exp(1j * np.outer(t // end_x, freqs))], axis=-1
    )
    cis = np.tile(cis, (repeat, 1))
    pairs = x.astype(np.float64).reshape(*x.shape[:-1], -1, 2)
    rotated = (pairs[..., 0] + 1j * pairs[..., 1]) * cis
    return np.stack([rotated.real, rotated.imag], axis=-1).reshape(x.shape)


@pytest.mark.parametrize("repeat", [1, 2])
def test_axial_rope_2d_is_sam2s_rotary_encoding(repeat):
    x = normal(2, 3, 6 * repeat, 8)
    props = {"end_x": 3, "end_y": 2, "head_dim": 8, "num_heads": 3, "theta": 100.0, "repeat_factor": repeat}
    out = run_op("axial_rope_2d", [x], **props)
    np.testing.assert_allclose(out, sam2_axial_rope(x, 3, 2, 100.0, repeat), rtol=1e-5, atol=1e-5)
    back = run_op("axial_rope_2d", [out], inverse=True, **props)
    np.testing.assert_allclose(back, x, rtol=1e-5, atol=1e-5)


CONV_T = [
    ({"kernel_size": [3, 2], "stride": [2, 1], "padding": [1, 0], "output_padding": [1, 0], "dilation": [1, 2], "groups": 1}, 3),
    ({"kernel_size": [2, 2], "stride": [2, 2], "padding": [0, 1], "output_padding": [1, 1], "dilation": [1, 1], "groups": 2}, 1),
]  # fmt: skip


@pytest.mark.parametrize(("props", "per_group"), CONV_T)
def test_conv_transpose_2d_and_its_gradients_match_torch(props, per_group):
    x = normal(2, 4, 3, 3).astype(np.float64)
    w = normal(4, per_group, *props["kernel_size"]).astype(np.float64)
    tx, tw = (torch.from_numpy(a).requires_grad_() for a in (x, w))
    torch_props = {k: v for k, v in props.items() if k != "kernel_size"}
    ref = F.conv_transpose2d(tx, tw, **torch_props)
    cotangent = RNG.standard_normal(ref.shape)
    ref.backward(torch.from_numpy(cotangent))

    b = GraphBuilder("f")
    y = b.conv_transpose_2d(b.input("x", x.shape, "f64"), b.input("w", w.shape, "f64"), **props)
    b.output(y)
    module = b.module()
    build_gradient(module, "f", ["0", "1"])
    out, dx, dw = run_function(module, "f_grad", [x, w, cotangent])
    np.testing.assert_allclose(out, ref.detach().numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dx, tx.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(dw, tw.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_conv_transpose_2d_with_dynamic_dims_sizes_its_output_at_run_time():
    """Every dim `?` (input and result): the kernel takes the sizes from the run-time input."""
    x, w = normal(1, 2, 3, 2), normal(2, 1, 2, 2)
    b = GraphBuilder("f")
    xs = b.input("x", [DYNAMIC] * 4)
    b.output(b.conv_transpose_2d(xs, b.input("w", w.shape), kernel_size=[2, 2], stride=[2, 1]))
    (got,) = run_function(b.module(), "f", [x, w])
    ref = F.conv_transpose2d(torch.from_numpy(x), torch.from_numpy(w), stride=(2, 1))
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5, atol=1e-6)


def test_precision_classes():
    assert precision_class(vision.LayerNorm2dOp) is Precision.COMPUTE
    assert precision_class(vision.ConvTranspose2dOp) is Precision.COMPUTE
    assert precision_class(vision.ResizeNearest2xOp) is Precision.DATA_MOVEMENT
    assert precision_class(vision.AxialRope2dOp) is Precision.DATA_MOVEMENT
