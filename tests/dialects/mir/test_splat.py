"""Gaussian-splatting ops against gsplat's pure-PyTorch reference (projection, SH colours,
tile intersection), all of which run on CPU, composited by a per-pixel loop written after
gsplat's CUDA rasteriser (its `_rasterize_to_pixels` calls the CUDA-only
`rasterize_to_indices_in_range` and needs nerfacc), with torch autograd for every gradient;
central differences on a few Gaussians."""

import itertools
from pathlib import Path

import numpy as np
import pytest
import torch

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import splat
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.gradcheck import check_vjp, mir_function
from rlx_xdsl.testing.oracles import run_op

gsplat = pytest.importorskip("gsplat.cuda._torch_impl")

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-splat.mlir"
test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
WIDTH, HEIGHT, TILE = 20, 12, 8
SIZE = {"width": WIDTH, "height": HEIGHT, "tile_size": TILE}


def rotation_y(angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([[c, 0, s], [0, 1, 0], [-s, 0, c]])


def camera_meta(
    width: int = WIDTH, height: int = HEIGHT, near: float = 0.01, far: float = 100.0
) -> np.ndarray:
    view = np.eye(4)
    view[:3, :3] = rotation_y(0.1)
    view[:3, 3] = [0.1, -0.05, 0.3]
    focal = 1.2 * width
    return np.concatenate(
        [view.ravel(), [focal, focal, width / 2 + 0.3, height / 2 - 0.2, near, far]]
    )


def scene(
    n: int, sh_count: int = 9, seed: int = 0, dtype=np.float64
) -> list[np.ndarray]:
    """n Gaussians in front of the camera of `camera_meta`, small enough to overlap a little."""
    rng = np.random.default_rng(seed)
    positions = np.column_stack(
        [rng.uniform(-0.8, 0.8, n), rng.uniform(-0.5, 0.5, n), rng.uniform(3, 5, n)]
    )
    scales = rng.uniform(0.08, 0.3, (n, 3))
    rotations = rng.standard_normal((n, 4))
    opacities = rng.uniform(0.3, 0.9, n)
    colors = rng.uniform(0.2, 0.8, (n, 3))
    sh = 0.3 * rng.standard_normal((n, sh_count, 3))
    return [
        a.astype(dtype)
        for a in (positions, scales, rotations, opacities, colors, sh, camera_meta())
    ]


# The oracle -------------------------------------------------------------------------------


def oracle_render(
    inputs, width=WIDTH, height=HEIGHT, tile=TILE, alpha_cutoff=1 / 255, threshold=1e-4
):
    """gsplat's projection, SH and tile lists; compositing as its CUDA kernel (alpha clamp 0.99)."""
    positions, scales, quats, opacities, colors, sh, meta = inputs
    view = torch.as_tensor(meta[:16].reshape(4, 4))
    fx, fy, cx, cy, near, far = (float(v) for v in meta[16:])
    ks = torch.tensor([[fx, 0, cx], [0, fy, cy], [0, 0, 1]], dtype=torch.float64)
    covars, _ = gsplat._quat_scale_to_covar_preci(quats, scales, compute_preci=False)
    radii, means2d, depths, conics, _ = gsplat._fully_fused_projection(
        positions,
        covars,
        view[None],
        ks[None],
        width,
        height,
        eps2d=0.3,
        near_plane=near,
        far_plane=far,
    )
    campos = torch.linalg.inv(view)[:3, 3]
    band = int(np.sqrt(sh.shape[1])) - 1
    rgb = torch.clamp_min(
        colors + gsplat._spherical_harmonics(band, positions - campos, sh), 0.0
    )
    tiles_x, tiles_y = -(-width // tile), -(-height // tile)
    _, isect_ids, flatten_ids = gsplat._isect_tiles(
        means2d, radii, depths, tile, tiles_x, tiles_y
    )
    offsets = gsplat._isect_offset_encode(
        isect_ids, 1, tiles_x, tiles_y
    ).flatten().tolist() + [len(flatten_ids)]
    means2d, conics = means2d[0], conics[0]
    pixels = []
    for row in range(height):
        for col in range(width):
            t_id = (row // tile) * tiles_x + col // tile
            ids = flatten_ids[offsets[t_id] : offsets[t_id + 1]].tolist()
            pixels.append(
                composite(
                    col + 0.5,
                    row + 0.5,
                    ids,
                    means2d,
                    conics,
                    opacities,
                    rgb,
                    alpha_cutoff,
                    threshold,
                )
            )
    return torch.stack(pixels).reshape(height, width, 3)


def composite(px, py, ids, means2d, conics, opacities, rgb, alpha_cutoff, threshold):
    """One pixel, front to back, as gsplat's `rasterize_to_pixels` kernel."""
    out = torch.zeros(3, dtype=torch.float64)
    transmittance = torch.ones((), dtype=torch.float64)
    for g in ids:
        dx, dy = px - means2d[g, 0], py - means2d[g, 1]
        a, b, c = conics[g]
        sigma = 0.5 * (a * dx * dx + c * dy * dy) + b * dx * dy
        alpha = torch.clamp_max(opacities[g] * torch.exp(-sigma), 0.99)
        if sigma < 0 or alpha < alpha_cutoff:
            continue
        after = transmittance * (1 - alpha)
        if after <= threshold:
            break
        out = out + rgb[g] * alpha * transmittance
        transmittance = after
    return out


def oracle_gradients(inputs, cotangent, **kw):
    tensors = [torch.tensor(a, requires_grad=i < 6) for i, a in enumerate(inputs)]
    image = oracle_render([*tensors[:6], inputs[6]], **kw)
    grads = torch.autograd.grad(
        image, tensors[:6], torch.as_tensor(cotangent), allow_unused=True
    )
    return image.detach().numpy(), [
        np.zeros(a.shape) if g is None else g.numpy() for g, a in zip(grads, inputs)
    ]


def unpack(packed: np.ndarray, sh_count: int) -> list[np.ndarray]:
    n = len(packed)
    bounds = np.cumsum([0, 3, 3, 4, 1, 3, 3 * sh_count])
    parts = [packed[:, lo:hi] for lo, hi in itertools.pairwise(bounds)]
    return [
        parts[0],
        parts[1],
        parts[2],
        parts[3].reshape(n),
        parts[4],
        parts[5].reshape(n, sh_count, 3),
    ]


# Tests ------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def case():
    inputs = scene(6, sh_count=9)
    cotangent = np.random.default_rng(1).standard_normal((HEIGHT, WIDTH, 3))
    image, grads = oracle_gradients(inputs, cotangent)
    return inputs, cotangent, image, grads


def test_render_matches_gsplat(case):
    inputs, _, image, _ = case
    out = run_op("gaussian_splat_render", inputs, **SIZE)
    assert out.shape == (HEIGHT, WIDTH, 3) and np.abs(out).max() > 0.1
    np.testing.assert_allclose(out, image, rtol=1e-9, atol=1e-12)


def test_prepare_then_rasterize_is_render(case):
    inputs = case[0]
    prepared = run_op("gaussian_splat_prepare", inputs, **SIZE)
    assert prepared.shape == (6, splat.PREPARED_COLUMNS)
    out = run_op("gaussian_splat_rasterize", [prepared, inputs[6]], **SIZE)
    np.testing.assert_allclose(out, case[2], rtol=1e-9, atol=1e-12)


def test_render_backward_matches_gsplat_autograd(case):
    inputs, cotangent, _, expected = case
    packed = run_op("gaussian_splat_render_backward", [*inputs, cotangent], **SIZE)
    assert packed.shape == (6, splat.packed_columns(9))
    for name, got, want in zip(splat.GAUSSIAN_INPUTS, unpack(packed, 9), expected):
        assert np.abs(want).max() > 0, name
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=name)


def test_render_backward_matches_central_differences():
    inputs = scene(3, sh_count=4, seed=3)
    cotangent = np.random.default_rng(2).standard_normal((HEIGHT, WIDTH, 3))
    packed = run_op("gaussian_splat_render_backward", [*inputs, cotangent], **SIZE)
    forward = mir_function("gaussian_splat_render", inputs, **SIZE)
    for wrt, grad in enumerate(unpack(packed, 4)):
        check_vjp(grad, forward, inputs, wrt, cotangent, rtol=1e-5, atol=1e-7)


def test_cutoffs_change_the_image_as_documented(case):
    """Fewer composited Gaussians, a higher alpha cut-off, a capped list: each differs from the
    default image, and the oracle agrees with the cut-off and threshold variants."""
    inputs, _, image, _ = case
    high_cut = run_op(
        "gaussian_splat_render",
        inputs,
        alpha_cutoff=0.3,
        transmittance_threshold=0.5,
        **SIZE,
    )
    want = oracle_render(
        [torch.as_tensor(a) for a in inputs[:6]] + [inputs[6]],
        alpha_cutoff=0.3,
        threshold=0.5,
    )
    np.testing.assert_allclose(high_cut, want.numpy(), rtol=1e-9, atol=1e-12)
    one_step = run_op("gaussian_splat_render", inputs, max_splat_steps=1, **SIZE)
    capped = run_op("gaussian_splat_render", inputs, max_list_entries=3, **SIZE)
    for other in (high_cut, one_step, capped):
        assert np.abs(other - image).max() > 1e-3


def test_gaussians_behind_the_near_plane_are_culled():
    inputs = scene(4)
    inputs[0][:, 2] = -inputs[0][:, 2]
    assert not run_op("gaussian_splat_render", inputs, **SIZE).any()


def test_a_64x64_image_of_ten_thousand_gaussians_renders_in_f32():
    rng = np.random.default_rng(5)
    inputs = scene(10_000, sh_count=1, dtype=np.float32)
    inputs[1] = rng.uniform(0.005, 0.02, (10_000, 3)).astype(np.float32)
    inputs[6] = camera_meta(64, 64).astype(np.float32)
    out = run_op("gaussian_splat_render", inputs, width=64, height=64)
    assert out.dtype == np.float32 and out.shape == (64, 64, 3) and out.max() > 0


def test_the_four_ops_are_compute_ops():
    assert {precision_class(op) for op in splat.OPS} == {Precision.COMPUTE}


def test_builder_emits_render_with_inferred_type():
    b = GraphBuilder("f")
    inputs = scene(2)
    args = [
        b.input(name, a.shape, "f64") for name, a in zip(splat.GAUSSIAN_INPUTS, inputs)
    ]
    b.output(
        b.mir.gaussian_splat_render(*args, width=WIDTH, height=HEIGHT, tile_size=TILE)
    )
    (out,) = run_function(b.module(), "f", inputs)
    assert out.shape == (HEIGHT, WIDTH, 3)


@pytest.mark.parametrize("sh_count", [1, 16])
def test_other_sh_bands_match_gsplat(sh_count):
    inputs = scene(3, sh_count=sh_count, seed=sh_count)
    cotangent = np.random.default_rng(3).standard_normal((HEIGHT, WIDTH, 3))
    image, expected = oracle_gradients(inputs, cotangent)
    np.testing.assert_allclose(
        run_op("gaussian_splat_render", inputs, **SIZE), image, rtol=1e-9, atol=1e-12
    )
    packed = run_op("gaussian_splat_render_backward", [*inputs, cotangent], **SIZE)
    for name, got, want in zip(
        splat.GAUSSIAN_INPUTS, unpack(packed, sh_count), expected
    ):
        np.testing.assert_allclose(got, want, rtol=1e-7, atol=1e-9, err_msg=name)


def backward(inputs, cotangent, **options):
    count = inputs[5].shape[1]
    return unpack(
        run_op(
            "gaussian_splat_render_backward", [*inputs, cotangent], **SIZE, **options
        ),
        count,
    )


def test_loss_grad_clip_clamps_the_image_cotangent_first(case):
    inputs, cotangent = case[0], 3 * case[1]
    clipped = backward(inputs, cotangent, loss_grad_clip=0.5)
    for got, want in zip(clipped, backward(inputs, np.clip(cotangent, -0.5, 0.5))):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-15)
    assert np.abs(clipped[0] - backward(inputs, cotangent)[0]).max() > 1e-3


def test_sh_band_zeroes_the_gradients_of_higher_bands_only(case):
    inputs, cotangent = case[0], case[1]
    full, band0 = backward(inputs, cotangent), backward(inputs, cotangent, sh_band=0)
    assert not band0[5][:, 1:].any() and np.abs(full[5][:, 1:]).max() > 0
    for got, want in zip(band0[:5] + [band0[5][:, :1]], full[:5] + [full[5][:, :1]]):
        np.testing.assert_array_equal(got, want)


def test_max_anisotropy_drops_the_scale_gradient_of_elongated_gaussians(case):
    inputs, cotangent = case[0], case[1]
    ratio = inputs[1].max(axis=1) / inputs[1].min(axis=1)
    limit = float(np.median(ratio))
    full, guarded = (
        backward(inputs, cotangent),
        backward(inputs, cotangent, max_anisotropy=limit),
    )
    elongated = ratio > limit
    assert elongated.any() and not elongated.all()
    assert not guarded[1][elongated].any()
    np.testing.assert_array_equal(guarded[1][~elongated], full[1][~elongated])
    for got, want in zip(guarded[:1] + guarded[2:], full[:1] + full[2:]):
        np.testing.assert_array_equal(got, want)
