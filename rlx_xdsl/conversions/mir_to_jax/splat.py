"""Gaussian splatting (Kerbl et al. 2023) in `jax.numpy`, from the ops' documented semantics
(`dialects.mir.splat`): EWA projection, then a rasteriser vectorised over pixels x Gaussians.

The interpreter sweeps tile lists; here every pixel sees all N Gaussians in one global
(depth, index) order, masked to those its tile lists. That mask reproduces the list cap
exactly: entry (tile t, Gaussian g) has rank `sum of earlier tiles' counts + g's rank in t`
in the (tile, depth) order and is kept when the rank is below `max_list_entries`. The
transmittance is the exclusive cumulative product of `1 - alpha` along the depth axis
(alpha 0 for a skipped or unlisted Gaussian, so it changes nothing), and `max_splat_steps`
counts composited Gaussians with a cumulative sum: all static shapes, so `jax.jit` traces it.
Everything is computed in f64 and rounded once, as the interpreter. render_backward is
`jax.vjp` of the render, with its three training options applied around it.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, with_op
from rlx_xdsl.dialects.mir import splat

BLUR = 0.3
"""Added to the 2-D covariance's diagonal (3DGS's low-pass filter)."""
FOV_MARGIN = 0.3
"""x/z and y/z are clamped to the field of view widened by 30% of its half-tangent."""
ALPHA_MAX = 0.99

_SH_C0 = 0.28209479177387814
_SH_C1 = 0.4886025119029199
_SH_C2 = (1.0925484305920792, -1.0925484305920792, 0.31539156525252005, -1.0925484305920792, 0.5462742152960396)
_SH_C3 = (-0.5900435899266435, 2.890611442640554, -0.4570457994644658, 0.3731763325901154,
          -0.4570457994644658, 1.445305721320277, -0.5900435899266435)  # fmt: skip


def sh_basis(d, count: int):
    """The real SH basis of bands 0..3 at unit directions `d[N, 3]`, `[N, count]`, in the
    form and sign convention of the 3DGS reference code (`computeColorFromSH`)."""
    x, y, z = d[:, 0], d[:, 1], d[:, 2]
    xx, yy, zz = x * x, y * y, z * z
    basis = [
        jnp.full_like(x, _SH_C0),
        -_SH_C1 * y, _SH_C1 * z, -_SH_C1 * x,
        _SH_C2[0] * x * y, _SH_C2[1] * y * z, _SH_C2[2] * (2 * zz - xx - yy),
        _SH_C2[3] * x * z, _SH_C2[4] * (xx - yy),
        _SH_C3[0] * y * (3 * xx - yy), _SH_C3[1] * x * y * z, _SH_C3[2] * y * (4 * zz - xx - yy),
        _SH_C3[3] * z * (2 * zz - 3 * xx - 3 * yy), _SH_C3[4] * x * (4 * zz - xx - yy),
        _SH_C3[5] * z * (xx - yy), _SH_C3[6] * x * (xx - 3 * yy),
    ]  # fmt: skip
    return jnp.stack(basis[:count], axis=-1)


def _unit(v):
    return v / jnp.maximum(jnp.linalg.norm(v, axis=-1, keepdims=True), 1e-12)


def rotation_matrix(q):
    """`R[N, 3, 3]` of unit quaternions `(w, x, y, z)`."""
    w, x, y, z = (q[:, i] for i in range(4))
    rows = [
        [1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)],
        [2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)],
        [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)],
    ]
    return jnp.stack([jnp.stack(r, axis=-1) for r in rows], axis=-2)


def prepare(op: splat.SplatOperation, positions, scales, rotations, opacities, colors, sh_coeffs, meta):
    """The `[N, 12]` rows: pixel mean, conic, depth, per-axis radius (0: culled), opacity, rgb."""
    width, height = op.prop("width"), op.prop("height")
    view = meta[:16].reshape(4, 4)
    world_to_cam, t = view[:3, :3], view[:3, 3]
    fx, fy, cx, cy, near, far = (meta[16 + i] for i in range(6))
    # the 3-D covariance R S S^T R^T, seen from the camera
    m = rotation_matrix(_unit(rotations)) * scales[:, None, :]
    cov_cam = world_to_cam @ (m @ jnp.swapaxes(m, 1, 2)) @ world_to_cam.T
    cam = positions @ world_to_cam.T + t
    depth = cam[:, 2]
    in_depth = (depth > near) & (depth < far)
    z = jnp.where(in_depth, depth, 1.0)
    # the perspective Jacobian at the (clamped) mean
    focal = jnp.stack([fx, fy])
    half_tan = 0.5 * jnp.array([width, height], depth.dtype) / focal
    centre = jnp.stack([cx, cy])
    low = -centre / focal - FOV_MARGIN * half_tan
    high = (jnp.array([width, height], depth.dtype) - centre) / focal + FOV_MARGIN * half_tan
    ratio = jnp.clip(cam[:, :2] / z[:, None], low, high)
    zeros = jnp.zeros_like(z)
    jac = jnp.stack(
        [
            jnp.stack([fx / z, zeros, -fx * ratio[:, 0] / z], axis=-1),
            jnp.stack([zeros, fy / z, -fy * ratio[:, 1] / z], axis=-1),
        ],
        axis=-2,
    )
    cov2d = jac @ cov_cam @ jnp.swapaxes(jac, 1, 2) + BLUR * jnp.eye(2, dtype=z.dtype)
    s_xx, s_xy, s_yx, s_yy = cov2d[:, 0, 0], cov2d[:, 0, 1], cov2d[:, 1, 0], cov2d[:, 1, 1]
    det = s_xx * s_yy - s_xy * s_yx
    invertible = det > 0
    det = jnp.where(invertible, det, 1.0)
    conic = jnp.stack([s_yy / det, -0.5 * (s_xy + s_yx) / det, s_xx / det], axis=-1)
    mean = cam[:, :2] / z[:, None] * focal + centre
    radius = jnp.ceil(
        op.prop("radius_scale") * jnp.sqrt(jnp.maximum(jax.lax.stop_gradient(jnp.stack([s_xx, s_yy], -1)), 0))
    )
    on_image = jnp.all((mean + radius > 0) & (mean - radius < jnp.array([width, height])), axis=-1)
    radius = jnp.where((in_depth & invertible & on_image)[:, None], radius, 0.0)
    # view-dependent colour from the camera centre -R^T t
    direction = _unit(positions + t @ world_to_cam)
    rgb = jnp.maximum(colors + jnp.einsum("nk,nkc->nc", sh_basis(direction, sh_coeffs.shape[1]), sh_coeffs), 0)
    return jnp.concatenate([mean, conic, depth[:, None], radius, opacities[:, None], rgb], axis=1)


def _listed(op: splat.SplatOperation, rows):
    """`[T, N]`: whether tile t's list holds Gaussian n, after the cap; and the depth order."""
    width, height, size = op.prop("width"), op.prop("height"), op.prop("tile_size")
    tiles_x, tiles_y = -(-width // size), -(-height // size)
    grid = jnp.array([tiles_x, tiles_y])
    mean, radius, depth = rows[:, 0:2], rows[:, 6:8], rows[:, 5]
    listed = jnp.all(radius > 0, axis=1) & jnp.all(jnp.isfinite(mean), axis=1)

    def corner(value):
        return jnp.where(listed[:, None], jnp.clip(value, 0, grid), 0).astype(jnp.int64)

    low = corner(jnp.floor(mean / size - radius / size))
    high = corner(jnp.ceil(mean / size + radius / size))
    tx, ty = jnp.arange(tiles_x), jnp.arange(tiles_y)
    in_x = (tx[:, None] >= low[None, :, 0]) & (tx[:, None] < high[None, :, 0])  # [Tx, N]
    in_y = (ty[:, None] >= low[None, :, 1]) & (ty[:, None] < high[None, :, 1])  # [Ty, N]
    order = jnp.argsort(depth, stable=True)  # ties by index, as the (tile, depth, index) sort
    member = (in_y[:, None, :] & in_x[None, :, :] & listed).reshape(-1, rows.shape[0])[:, order]
    limit = op.prop("max_list_entries")
    if limit:
        counts = jnp.sum(member, axis=1)
        rank = (jnp.cumsum(counts) - counts)[:, None] + jnp.cumsum(member, axis=1) - 1
        member = member & (rank < limit)
    return member, order


def rasterize(op: splat.SplatOperation, rows):
    """The `[height, width, 3]` image of prepared rows, composited front to back."""
    width, height, size = op.prop("width"), op.prop("height"), op.prop("tile_size")
    member, order = _listed(op, jax.lax.stop_gradient(rows))
    rows = rows[order]
    px, py = jnp.meshgrid(jnp.arange(width), jnp.arange(height))
    tiles_x = -(-width // size)
    pixel_tile = ((py // size) * tiles_x + px // size).ravel()
    member = member[pixel_tile]  # [P, N]
    d = jnp.stack([px.ravel() + 0.5, py.ravel() + 0.5], -1)[:, None, :] - rows[None, :, 0:2]
    a, b, c = rows[:, 2], rows[:, 3], rows[:, 4]
    sigma = 0.5 * (a * d[..., 0] ** 2 + c * d[..., 1] ** 2) + b * d[..., 0] * d[..., 1]
    candidate = member & (sigma >= 0)
    alpha = jnp.minimum(ALPHA_MAX, rows[:, 8] * jnp.exp(-jnp.where(candidate, sigma, 0.0)))
    kept = candidate & (alpha >= op.prop("alpha_cutoff"))
    alpha = jnp.where(kept, alpha, 0.0)
    after = jnp.cumprod(1 - alpha, axis=1)
    before = jnp.concatenate([jnp.ones_like(after[:, :1]), after[:, :-1]], axis=1)
    used = kept & (jax.lax.stop_gradient(after) > op.prop("transmittance_threshold"))
    steps = op.prop("max_splat_steps")
    if steps:
        used = used & (jnp.cumsum(used, axis=1) <= steps)
    weight = jnp.where(used, alpha * before, 0.0)
    return _composited(member, weight, rows[:, 9:12]).reshape(height, width, 3)


def _composited(member, weight, rgb):
    """`[P, 3]`: each pixel's `sum of weight * rgb` over the Gaussians its tile lists (the
    interpreter's `weight @ rgb` over the tile's ids). A Gaussian no list holds adds nothing,
    even with a non-finite colour (`weight @ rgb` over all N would add its 0 * inf = NaN); a
    listed one with a NaN colour, or an inf one at weight 0, makes the pixel NaN."""
    finite = jnp.isfinite(rgb)
    total = weight @ jnp.where(finite, rgb, 0.0)
    listed = member.astype(weight.dtype)
    poisoned = listed @ jnp.isnan(rgb) + (listed * (weight == 0)) @ jnp.isinf(rgb)
    infinite = (listed * (weight > 0)) @ (rgb == jnp.inf)  # rgb >= 0: never -inf
    return jnp.where(poisoned > 0, jnp.nan, jnp.where(infinite > 0, jnp.inf, total))


def _f64(*arrays):
    return [jnp.asarray(x, jnp.float64) for x in arrays]


def _render(op: splat.GaussianSplatRenderOp, *inputs):
    return rasterize(op, prepare(op, *_f64(*inputs)))


def _render_backward(op: splat.GaussianSplatRenderBackwardOp, *operands):
    """`jax.vjp` of the render for the six Gaussian inputs (the camera gets none), packed;
    the cotangent clamped first, higher SH bands and over-elongated scales zeroed after."""
    *inputs, grad = _f64(*operands)
    clip = op.prop("loss_grad_clip")
    if clip:
        grad = jnp.clip(grad, -clip, clip)
    gaussians, meta = inputs[:6], inputs[6]
    _, pullback = jax.vjp(lambda *g: rasterize(op, prepare(op, *g, meta)), *gaussians)
    d_pos, d_scales, d_rot, d_opacity, d_colors, d_sh = pullback(grad)
    d_sh = d_sh.at[:, (op.prop("sh_band") + 1) ** 2 :, :].set(0.0)
    limit = op.prop("max_anisotropy")
    if limit:
        scales = gaussians[1]
        elongation = scales.max(axis=1) / jnp.maximum(scales.min(axis=1), jnp.finfo(jnp.float64).tiny)
        d_scales = jnp.where((elongation > limit)[:, None], 0.0, d_scales)
    n = d_pos.shape[0]
    packed = jnp.concatenate([d_pos, d_scales, d_rot, d_opacity[:, None], d_colors, d_sh.reshape(n, -1)], axis=1)
    # A Gaussian no tile lists gets nothing, as in the interpreter (the VJP can give it
    # 0 * inf = NaN through the `where`s that cull it).
    member, order = _listed(op, prepare(op, *gaussians, meta))
    listed = jnp.zeros(n, bool).at[order].set(jnp.any(member, axis=0))
    return jnp.where(listed[:, None], packed, 0.0)


JAX_OPS.add(splat.GaussianSplatRenderOp, with_op(_render))
JAX_OPS.add(splat.GaussianSplatPrepareOp, with_op(lambda op, *inputs: prepare(op, *_f64(*inputs))))
JAX_OPS.add(splat.GaussianSplatRasterizeOp, with_op(lambda op, rows, meta: rasterize(op, *_f64(rows))))
JAX_OPS.add(splat.GaussianSplatRenderBackwardOp, with_op(_render_backward))
