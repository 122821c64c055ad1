"""numpy semantics of the Gaussian-splatting ops (`dialects.mir.splat` defines the layouts).

Everything is computed in f64 and rounded once to the result dtype. The steps follow the 3DGS
reference rasteriser as gsplat implements it: world-to-camera, EWA projection with a 0.3
pixel blur on the 2-D covariance (the Jacobian's x/z and y/z clamped to 1.3x the half field
of view), per-axis radii, culling by depth and image bounds, (tile, depth)-sorted tile lists,
then per pixel `alpha = min(0.99, o * exp(-sigma))`, skipped below `alpha_cutoff`,
composited front to back until the transmittance would reach the threshold.

The rasteriser is vectorised per tile: the tile's pixels against its depth-sorted list, with
the transmittance as a cumulative product. The backward pass is the same sweep read
backwards (suffix sums of the composited colour) and the projection's chain rule, written
out per Gaussian (vectorised over Gaussians).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from rlx_xdsl.dialects.mir import splat
from rlx_xdsl.interpreters.common import result_dtype
from rlx_xdsl.numerics import KernelError, convert

EPS2D = 0.3
"""Added to the 2-D covariance's diagonal (a pixel-sized low-pass filter, as in 3DGS)."""
ALPHA_MAX = 0.99
"""Alphas are clamped to this (3DGS; gsplat uses 0.999)."""

# Real spherical harmonics of bands 0..3 on the unit sphere, as polynomials: one list of
# (coefficient, power of x, power of y, power of z) terms per basis function (3DGS's signs).
_C0, _C1 = 0.28209479177387814, 0.4886025119029199
_C2 = (
    1.0925484305920792,
    -1.0925484305920792,
    0.31539156525252005,
    -1.0925484305920792,
    0.5462742152960396,
)
_C3 = (-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
       -0.4570457994644658, 1.445305721320277, -0.5900435899266435)  # fmt: skip
SH_POLYNOMIALS = (
    [(_C0, 0, 0, 0)],
    [(-_C1, 0, 1, 0)],
    [(_C1, 0, 0, 1)],
    [(-_C1, 1, 0, 0)],
    [(_C2[0], 1, 1, 0)],
    [(_C2[1], 0, 1, 1)],
    [(2 * _C2[2], 0, 0, 2), (-_C2[2], 2, 0, 0), (-_C2[2], 0, 2, 0)],
    [(_C2[3], 1, 0, 1)],
    [(_C2[4], 2, 0, 0), (-_C2[4], 0, 2, 0)],
    [(3 * _C3[0], 2, 1, 0), (-_C3[0], 0, 3, 0)],
    [(_C3[1], 1, 1, 1)],
    [(4 * _C3[2], 0, 1, 2), (-_C3[2], 2, 1, 0), (-_C3[2], 0, 3, 0)],
    [(2 * _C3[3], 0, 0, 3), (-3 * _C3[3], 2, 0, 1), (-3 * _C3[3], 0, 2, 1)],
    [(4 * _C3[4], 1, 0, 2), (-_C3[4], 3, 0, 0), (-_C3[4], 1, 2, 0)],
    [(_C3[5], 2, 0, 1), (-_C3[5], 0, 2, 1)],
    [(_C3[6], 3, 0, 0), (-3 * _C3[6], 1, 2, 0)],
)


def _power(v: np.ndarray, k: int) -> np.ndarray:
    return v**k if k else np.ones_like(v)


def sh_basis(d: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """`Y[N, count]` at unit directions `d[N, 3]` and its gradient `dY/dd[N, count, 3]`."""
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    values = np.zeros((len(d), count))
    grads = np.zeros((len(d), count, 3))
    for k, terms in enumerate(SH_POLYNOMIALS[:count]):
        for c, a, b, e in terms:
            values[:, k] += c * _power(x, a) * _power(y, b) * _power(z, e)
            if a:
                grads[:, k, 0] += c * a * _power(x, a - 1) * _power(y, b) * _power(z, e)
            if b:
                grads[:, k, 1] += c * b * _power(x, a) * _power(y, b - 1) * _power(z, e)
            if e:
                grads[:, k, 2] += c * e * _power(x, a) * _power(y, b) * _power(z, e - 1)
    return values, grads


@dataclass(frozen=True)
class Camera:
    rotation: np.ndarray  # [3, 3] world to camera
    translation: np.ndarray  # [3]
    fx: float
    fy: float
    cx: float
    cy: float
    near: float
    far: float

    @staticmethod
    def of(meta: np.ndarray) -> Camera:
        m = np.asarray(meta, np.float64)
        view = m[:16].reshape(4, 4)
        camera = Camera(view[:3, :3], view[:3, 3], *map(float, m[16:22]))
        if camera.fx == 0 or camera.fy == 0:
            raise KernelError(f"camera focal lengths fx = {camera.fx}, fy = {camera.fy} must be nonzero")
        return camera

    def centre(self) -> np.ndarray:
        """The camera's position in world space: `-R^T t`."""
        return -self.rotation.T @ self.translation


def quat_to_rotmat(q: np.ndarray) -> np.ndarray:
    """Rotation matrices `[N, 3, 3]` of unit quaternions `(w, x, y, z)`."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    return np.stack(
        [
            1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
            2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
            2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
        ],
        axis=-1,
    ).reshape(-1, 3, 3)  # fmt: skip


def rotmat_grad_to_quat(q: np.ndarray, dr: np.ndarray) -> np.ndarray:
    """The gradient on a unit quaternion `q[N, 4]` of `dR[N, 3, 3]` (R as `quat_to_rotmat`)."""
    w, x, y, z = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    g = dr.reshape(-1, 9)
    d00, d01, d02, d10, d11, d12, d20, d21, d22 = g.T
    return 2 * np.stack(
        [
            -z * d01 + y * d02 + z * d10 - x * d12 - y * d20 + x * d21,
            y * d01
            + z * d02
            + y * d10
            - 2 * x * d11
            - w * d12
            + z * d20
            + w * d21
            - 2 * x * d22,
            -2 * y * d00
            + x * d01
            + w * d02
            + x * d10
            + z * d12
            - w * d20
            + z * d21
            - 2 * y * d22,
            -2 * z * d00
            - w * d01
            + x * d02
            + w * d10
            - 2 * z * d11
            + y * d12
            + x * d20
            + y * d21,
        ],
        axis=-1,
    )


def _normalized(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """`v / |v|` and `|v|`, the norm at least 1e-12 (as `torch.nn.functional.normalize`)."""
    norm = np.maximum(np.linalg.norm(v, axis=-1, keepdims=True), 1e-12)
    return v / norm, norm


def _unnormalize_grad(
    unit: np.ndarray, norm: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    """The gradient on `v` of a gradient on `v / |v|`."""
    return (grad - unit * np.sum(unit * grad, axis=-1, keepdims=True)) / norm


@dataclass
class Projection:
    """Everything prepare computes, kept for the backward pass."""

    camera: Camera
    quat: np.ndarray
    quat_norm: np.ndarray
    rot: np.ndarray  # R(q) [N, 3, 3]
    scales: np.ndarray
    cam: np.ndarray  # camera-space means [N, 3]
    depth_ok: np.ndarray
    z: np.ndarray  # depth, 1 where culled by depth
    ratio: np.ndarray  # the clamped x/z, y/z [N, 2]
    unclamped: np.ndarray  # [N, 2]
    jac: np.ndarray  # [N, 2, 3]
    cov_cam: np.ndarray  # [N, 3, 3]
    conic_matrix: np.ndarray  # [N, 2, 2]
    sh: np.ndarray  # Y [N, K]
    sh_grad: np.ndarray  # dY/dd [N, K, 3]
    sh_coeffs: np.ndarray
    direction: np.ndarray
    direction_norm: np.ndarray
    raw_rgb: np.ndarray
    prepared: np.ndarray  # [N, 12]


def project(
    op: splat.SplatOperation,
    positions,
    scales,
    rotations,
    opacities,
    colors,
    sh_coeffs,
    meta,
) -> Projection:
    """prepare's rows, and what its gradient needs."""
    f = [
        np.asarray(a, np.float64)
        for a in (positions, scales, rotations, opacities, colors, sh_coeffs)
    ]
    positions, scales, rotations, opacities, colors, sh_coeffs = f
    camera = Camera.of(meta)
    width, height = op.prop("width"), op.prop("height")
    quat, quat_norm = _normalized(rotations)
    rot = quat_to_rotmat(quat)
    m = rot * scales[:, None, :]
    cov = m @ m.transpose(0, 2, 1)
    cam = positions @ camera.rotation.T + camera.translation
    depth = cam[:, 2]
    depth_ok = (depth > camera.near) & (depth < camera.far)
    z = np.where(depth_ok, depth, 1.0)
    tan_fov = np.array([0.5 * width / camera.fx, 0.5 * height / camera.fy])
    low = -np.array([camera.cx / camera.fx, camera.cy / camera.fy]) - 0.3 * tan_fov
    high = (
        np.array([(width - camera.cx) / camera.fx, (height - camera.cy) / camera.fy])
        + 0.3 * tan_fov
    )
    raw_ratio = cam[:, :2] / z[:, None]
    ratio = np.clip(raw_ratio, low, high)
    unclamped = (raw_ratio >= low) & (raw_ratio <= high)
    jac = np.zeros((len(z), 2, 3))
    jac[:, 0, 0] = camera.fx / z
    jac[:, 1, 1] = camera.fy / z
    jac[:, 0, 2] = -camera.fx * ratio[:, 0] / z
    jac[:, 1, 2] = -camera.fy * ratio[:, 1] / z
    cov_cam = camera.rotation @ cov @ camera.rotation.T
    cov2d = jac @ cov_cam @ jac.transpose(0, 2, 1) + EPS2D * np.eye(2)
    det = cov2d[:, 0, 0] * cov2d[:, 1, 1] - cov2d[:, 0, 1] * cov2d[:, 1, 0]
    det_ok = det > 0
    det = np.where(det_ok, det, 1.0)
    off = 0.5 * (cov2d[:, 0, 1] + cov2d[:, 1, 0])
    conic = np.stack([cov2d[:, 1, 1] / det, -off / det, cov2d[:, 0, 0] / det], axis=-1)
    u = camera.fx * cam[:, 0] / z + camera.cx
    v = camera.fy * cam[:, 1] / z + camera.cy
    scale = op.prop("radius_scale")
    radius = np.ceil(
        scale * np.sqrt(np.maximum(np.stack([cov2d[:, 0, 0], cov2d[:, 1, 1]], -1), 0))
    )
    inside = (
        (u + radius[:, 0] > 0)
        & (u - radius[:, 0] < width)
        & (v + radius[:, 1] > 0)
        & (v - radius[:, 1] < height)
    )
    radius[~(depth_ok & det_ok & inside)] = 0
    direction, direction_norm = _normalized(positions - camera.centre())
    count = sh_coeffs.shape[1]
    sh, sh_grad = sh_basis(direction, count)
    raw_rgb = colors + np.einsum("nk,nkc->nc", sh, sh_coeffs)
    rgb = np.maximum(raw_rgb, 0.0)
    prepared = np.concatenate(
        [
            u[:, None],
            v[:, None],
            conic,
            depth[:, None],
            radius,
            opacities[:, None],
            rgb,
        ],
        axis=1,
    )
    conic_matrix = np.stack(
        [conic[:, 0], conic[:, 1], conic[:, 1], conic[:, 2]], -1
    ).reshape(-1, 2, 2)
    return Projection(
        camera, quat, quat_norm, rot, scales, cam, depth_ok, z, ratio, unclamped, jac, cov_cam,
        conic_matrix, sh, sh_grad, sh_coeffs, direction, direction_norm, raw_rgb, prepared,
    )  # fmt: skip


@dataclass(frozen=True)
class Tile:
    """One tile's pixels (centres, flat image indices) and its depth-sorted Gaussians."""

    centres: np.ndarray  # [P, 2] (x, y)
    pixels: np.ndarray  # [P]
    ids: np.ndarray  # [M]


def tiles(op: splat.SplatOperation, prepared: np.ndarray) -> list[Tile]:
    """The (tile, Gaussian) list: every tile a Gaussian's radius box touches, sorted by tile
    then depth, cut at `max_list_entries`, split per tile."""
    width, height, size = op.prop("width"), op.prop("height"), op.prop("tile_size")
    tiles_x, tiles_y = -(-width // size), -(-height // size)
    mean, radius, depth = prepared[:, 0:2], prepared[:, 6:8], prepared[:, 5]
    listed = np.all(radius > 0, axis=1) & np.all(np.isfinite(mean), axis=1)
    grid = np.array([tiles_x, tiles_y])

    def corner(
        value: np.ndarray,
    ) -> np.ndarray:  # clipped first: a huge radius is no overflow
        return np.where(listed[:, None], np.clip(value, 0, grid), 0).astype(np.int64)

    low = corner(np.floor(mean / size - radius / size))
    high = corner(np.ceil(mean / size + radius / size))
    span = high - low
    counts = np.where(listed, span[:, 0] * span[:, 1], 0)
    ids = np.repeat(np.arange(len(prepared)), counts)
    local = np.arange(len(ids)) - np.repeat(np.cumsum(counts) - counts, counts)
    span_x = np.maximum(span[ids, 0], 1)
    tile_ids = (low[ids, 1] + local // span_x) * tiles_x + low[ids, 0] + local % span_x
    order = np.lexsort((ids, depth[ids], tile_ids))
    limit = op.prop("max_list_entries")
    if limit:
        order = order[:limit]
    ids, tile_ids = ids[order], tile_ids[order]
    starts = (
        np.flatnonzero(np.r_[True, tile_ids[1:] != tile_ids[:-1]])
        if len(ids)
        else np.zeros(0, int)
    )
    result = []
    for start, stop in zip(starts, np.r_[starts[1:], len(ids)]):
        ty, tx = divmod(int(tile_ids[start]), tiles_x)
        xs = np.arange(tx * size, min((tx + 1) * size, width))
        ys = np.arange(ty * size, min((ty + 1) * size, height))
        px, py = np.meshgrid(xs, ys)
        centres = np.stack([px.ravel() + 0.5, py.ravel() + 0.5], axis=-1)
        result.append(Tile(centres, (py * width + px).ravel(), ids[start:stop]))
    return result


@dataclass
class Sweep:
    """A tile's front-to-back compositing: per (pixel, Gaussian) values."""

    delta: np.ndarray  # [P, M, 2] pixel centre minus mean
    falloff: np.ndarray  # exp(-sigma)
    raw_alpha: np.ndarray  # o * exp(-sigma)
    alpha: np.ndarray  # clamped, 0 where skipped
    before: np.ndarray  # transmittance before each Gaussian
    used: np.ndarray  # composited
    weight: np.ndarray  # alpha * before, 0 where not composited


def sweep(op: splat.SplatOperation, prepared: np.ndarray, tile: Tile) -> Sweep:
    rows = prepared[tile.ids]
    delta = tile.centres[:, None, :] - rows[None, :, 0:2]
    a, b, c = rows[:, 2], rows[:, 3], rows[:, 4]
    dx, dy = delta[..., 0], delta[..., 1]
    sigma = 0.5 * (a * dx * dx + c * dy * dy) + b * dx * dy
    falloff = np.exp(-sigma)
    raw_alpha = rows[:, 8] * falloff
    alpha = np.minimum(ALPHA_MAX, raw_alpha)
    kept = (sigma >= 0) & (alpha >= op.prop("alpha_cutoff"))
    alpha = np.where(kept, alpha, 0.0)
    after = np.cumprod(1.0 - alpha, axis=1)
    before = np.concatenate([np.ones((len(alpha), 1)), after[:, :-1]], axis=1)
    used = kept & (after > op.prop("transmittance_threshold"))
    steps = op.prop("max_splat_steps")
    if steps:
        used &= np.cumsum(used, axis=1) <= steps
    return Sweep(
        delta,
        falloff,
        raw_alpha,
        alpha,
        before,
        used,
        np.where(used, alpha * before, 0.0),
    )


def rasterize(op: splat.SplatOperation, prepared: np.ndarray) -> np.ndarray:
    """The `[height, width, 3]` image of prepared rows."""
    image = np.zeros((op.prop("height") * op.prop("width"), 3))
    for tile in tiles(op, prepared):
        s = sweep(op, prepared, tile)
        image[tile.pixels] = s.weight @ prepared[tile.ids, 9:12]
    return image.reshape(op.prop("height"), op.prop("width"), 3)


def rasterize_backward(
    op: splat.SplatOperation, prepared: np.ndarray, grad: np.ndarray
) -> np.ndarray:
    """The gradient on prepared rows (mean, conic, opacity and rgb columns) of the image's."""
    out = np.zeros_like(prepared)
    grad = grad.reshape(-1, 3)
    for tile in tiles(op, prepared):
        s = sweep(op, prepared, tile)
        rows, g = prepared[tile.ids], grad[tile.pixels]
        out[tile.ids, 9:12] += s.weight.T @ g
        g_rgb = g @ rows[:, 9:12].T  # [P, M]: g . rgb_j
        behind = (
            np.cumsum((s.weight * g_rgb)[:, ::-1], axis=1)[:, ::-1] - s.weight * g_rgb
        )
        d_alpha = np.where(s.used, g_rgb * s.before - behind / (1.0 - s.alpha), 0.0)
        d_alpha = np.where(s.raw_alpha < ALPHA_MAX, d_alpha, 0.0)
        out[tile.ids, 8] += np.sum(d_alpha * s.falloff, axis=0)
        d_sigma = -d_alpha * s.raw_alpha
        dx, dy = s.delta[..., 0], s.delta[..., 1]
        a, b, c = rows[:, 2], rows[:, 3], rows[:, 4]
        out[tile.ids, 0] -= np.sum(d_sigma * (a * dx + b * dy), axis=0)
        out[tile.ids, 1] -= np.sum(d_sigma * (c * dy + b * dx), axis=0)
        out[tile.ids, 2] += np.sum(0.5 * d_sigma * dx * dx, axis=0)
        out[tile.ids, 3] += np.sum(d_sigma * dx * dy, axis=0)
        out[tile.ids, 4] += np.sum(0.5 * d_sigma * dy * dy, axis=0)
    return out


def project_backward(
    op: splat.GaussianSplatRenderBackwardOp, p: Projection, d_prep: np.ndarray
):
    """The gradients of the seven inputs (meta's is not computed) from those on the rows."""
    cam, fx, fy = p.camera, p.camera.fx, p.camera.fy
    live = p.prepared[:, 6] > 0
    d_prep = np.where(live[:, None], d_prep, 0.0)
    z = p.z
    # colour: rgb = max(colors + Y . sh, 0)
    d_rgb = np.where(p.raw_rgb > 0, d_prep[:, 9:12], 0.0)
    d_colors = d_rgb
    d_sh = p.sh[:, :, None] * d_rgb[:, None, :]
    band = op.prop("sh_band")
    d_sh[:, (band + 1) ** 2 :, :] = 0.0
    d_direction = np.einsum(
        "nk,nkd->nd", np.einsum("nkc,nc->nk", p.sh_coeffs, d_rgb), p.sh_grad
    )
    d_positions = _unnormalize_grad(p.direction, p.direction_norm, d_direction)
    # conic = inverse(cov2d): d cov2d = -C G C with G the symmetric gradient matrix
    da, db, dc = d_prep[:, 2], d_prep[:, 3], d_prep[:, 4]
    g_conic = np.stack([da, 0.5 * db, 0.5 * db, dc], -1).reshape(-1, 2, 2)
    d_cov2d = -p.conic_matrix @ g_conic @ p.conic_matrix
    # cov2d = J cov_cam J^T
    d_cov_cam = p.jac.transpose(0, 2, 1) @ d_cov2d @ p.jac
    d_jac = 2 * d_cov2d @ p.jac @ p.cov_cam
    # cov_cam = V cov V^T; cov = M M^T with M = R diag(s)
    d_cov = cam.rotation.T @ d_cov_cam @ cam.rotation
    m = p.rot * p.scales[:, None, :]
    d_m = 2 * d_cov @ m
    d_scales = np.sum(d_m * p.rot, axis=1)
    d_unit_quat = rotmat_grad_to_quat(p.quat, d_m * p.scales[:, None, :])
    d_rotations = _unnormalize_grad(p.quat, p.quat_norm, d_unit_quat)
    # the camera-space mean, through the pixel mean and the Jacobian
    x, y = p.cam[:, 0], p.cam[:, 1]
    du, dv = d_prep[:, 0], d_prep[:, 1]
    d_ratio_x = d_jac[:, 0, 2] * (-fx / z)
    d_ratio_y = d_jac[:, 1, 2] * (-fy / z)
    d_cam = np.zeros_like(p.cam)
    d_cam[:, 0] = du * fx / z + np.where(p.unclamped[:, 0], d_ratio_x / z, 0.0)
    d_cam[:, 1] = dv * fy / z + np.where(p.unclamped[:, 1], d_ratio_y / z, 0.0)
    d_cam[:, 2] = (
        -du * fx * x / z**2 - dv * fy * y / z**2
        - d_jac[:, 0, 0] * fx / z**2 - d_jac[:, 1, 1] * fy / z**2
        + d_jac[:, 0, 2] * fx * p.ratio[:, 0] / z**2 + d_jac[:, 1, 2] * fy * p.ratio[:, 1] / z**2
        - np.where(p.unclamped[:, 0], d_ratio_x * x / z**2, 0.0)
        - np.where(p.unclamped[:, 1], d_ratio_y * y / z**2, 0.0)
    )  # fmt: skip
    d_cam = np.where(p.depth_ok[:, None], d_cam, 0.0)
    d_positions = d_positions + d_cam @ cam.rotation
    limit = op.prop("max_anisotropy")
    if limit:
        ratio = p.scales.max(axis=1) / np.maximum(
            p.scales.min(axis=1), np.finfo(np.float64).tiny
        )
        d_scales = np.where((ratio > limit)[:, None], 0.0, d_scales)
    grads = [d_positions, d_scales, d_rotations, d_prep[:, 8], d_colors, d_sh]
    return [np.where(live.reshape((-1,) + (1,) * (g.ndim - 1)), g, 0.0) for g in grads]


def run_prepare(op: splat.GaussianSplatPrepareOp, *inputs) -> tuple[np.ndarray]:
    return (convert(project(op, *inputs).prepared, result_dtype(op)),)


def run_rasterize(
    op: splat.GaussianSplatRasterizeOp, prepared, meta
) -> tuple[np.ndarray]:
    return (convert(rasterize(op, np.asarray(prepared, np.float64)), result_dtype(op)),)


def run_render(op: splat.GaussianSplatRenderOp, *inputs) -> tuple[np.ndarray]:
    return (convert(rasterize(op, project(op, *inputs).prepared), result_dtype(op)),)


def run_render_backward(
    op: splat.GaussianSplatRenderBackwardOp, *operands
) -> tuple[np.ndarray]:
    *inputs, grad = operands
    grad = np.asarray(grad, np.float64)
    clip = op.prop("loss_grad_clip")
    if clip:
        grad = np.clip(grad, -clip, clip)
    p = project(op, *inputs)
    d_prep = rasterize_backward(op, p.prepared, grad)
    grads = project_backward(op, p, d_prep)
    packed = np.concatenate([g.reshape(len(g), -1) for g in grads], axis=1)
    return (convert(packed, result_dtype(op)),)


KERNELS = {
    splat.GaussianSplatRenderOp: run_render,
    splat.GaussianSplatPrepareOp: run_prepare,
    splat.GaussianSplatRasterizeOp: run_rasterize,
    splat.GaussianSplatRenderBackwardOp: run_render_backward,
}
