"""JVP rules of the Gaussian-splatting ops.

The render's tangent is pushed through `render_primitives`, the render written in primitive
MIR (`jvp_of_expansion`, as the backward kernels' rules use their decompositions). The
discrete choices (culling, radii, tile lists, depth order) come from a `gaussian_splat_prepare`
of the inputs behind `stop_gradient`: piecewise constant, they carry no tangent. Only the
smooth columns (pixel mean, conic, opacity, colour) are rebuilt from primitives, and the
compositing avoids a sort's data-dependent lists: every pixel sees all N Gaussians in depth
order (`topk` of minus the depth: ties by index), masked to its tile's list with the list cap
as a rank in (tile, depth) order; the transmittance before a Gaussian is `exp` of the
exclusive cumulative sum of `log(1 - alpha)` (alpha <= 0.99), `max_splat_steps` a cumulative
count. That costs `O(height * width * N)` per tangent, against the kernel's per-tile lists.

render_backward's tangent is the rasteriser's second derivative, which nothing computes (its
reverse rule, `no_gradient`, also stops there); a zero tangent would make `rlx-hvp` silently
wrong, so it is refused. prepare and rasterize have no rule in either mode: `rlx-prepare-ad`'s
`fuse-decomposed-gaussian-splat` step makes the pair one render, and `rlx-jvp` names it.
"""

from __future__ import annotations

import numpy as np
from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, NoJvpRule, OutTangents, Tangents
from rlx_xdsl.autodiff.jvp_rules.common import jvp_of_expansion
from rlx_xdsl.autodiff.registry import Unsupported
from rlx_xdsl.dialects.mir.splat import GaussianSplatRenderBackwardOp, GaussianSplatRenderOp
from rlx_xdsl.interpreters.mir.splat import ALPHA_MAX, EPS2D, SH_POLYNOMIALS
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.transforms.decompose_backward.emit import dtype_of, filled, logical_and, scalar, shape_of

FOV_MARGIN = 0.3
"""x/z and y/z are clamped to the half field of view widened by 30% (the kernel's Jacobian)."""


class _Ops:
    """Shorthands over an emitter for the long arithmetic below."""

    def __init__(self, e: Emitter, like: SSAValue):
        self.e, self.like = e, like

    def num(self, value: float) -> SSAValue:
        return scalar(self.e, value, self.like)

    def array(self, value: np.ndarray) -> SSAValue:
        return self.e.mir.constant(np.asarray(value), dtype_of(self.like))

    def col(self, x: SSAValue, i: int, width: int = 1) -> SSAValue:
        return self.e.mir.narrow(x, axis=1, start=i, len=width)

    def where(self, cond: SSAValue, a: SSAValue | float, b: SSAValue | float) -> SSAValue:
        a, b = (v if isinstance(v, SSAValue) else self.num(v) for v in (a, b))
        return self.e.mir.where(cond, a, b)

    def unit(self, v: SSAValue) -> SSAValue:
        """`v / max(|v|, 1e-12)` along axis 1."""
        e = self.e
        norm = e.mir.sqrt(e.mir.reduce(e.mir.mul(v, v), kind="sum", axes=[1], keep_dim=True))
        return e.mir.div(v, e.mir.max(norm, self.num(1e-12)))

    def product(self, *factors: SSAValue) -> SSAValue:
        out = factors[0]
        for f in factors[1:]:
            out = self.e.mir.mul(out, f)
        return out

    def total(self, *terms: SSAValue) -> SSAValue:
        out = terms[0]
        for t in terms[1:]:
            out = self.e.mir.add(out, t)
        return out


def _rotation(o: _Ops, q: SSAValue, n: int) -> SSAValue:
    """`R[N, 3, 3]` of unit quaternions `(w, x, y, z)` `[N, 4]`."""
    e, p = o.e, o.product
    w, x, y, z = (o.col(q, i) for i in range(4))
    one, two = o.num(1.0), o.num(2.0)

    def twice(a, b, sign, c, d):  # 2 (a b +/- c d)
        return e.mir.mul(two, (e.mir.add if sign > 0 else e.mir.sub)(p(a, b), p(c, d)))

    def diagonal(a, b):  # 1 - 2 (a a + b b)
        return e.mir.sub(one, e.mir.mul(two, e.mir.add(p(a, a), p(b, b))))

    entries = [
        diagonal(y, z), twice(x, y, -1, w, z), twice(x, z, 1, w, y),
        twice(x, y, 1, w, z), diagonal(x, z), twice(y, z, -1, w, x),
        twice(x, z, -1, w, y), twice(y, z, 1, w, x), diagonal(x, y),
    ]  # fmt: skip
    return e.mir.reshape(e.mir.concat(*entries, axis=1), new_shape=[n, 3, 3])


def _sh_colour(o: _Ops, direction: SSAValue, colors: SSAValue, sh: SSAValue, n: int, count: int) -> SSAValue:
    """`max(colors + sum_k Y_k(d) sh[:, k], 0)`, the basis from the kernel's polynomial table."""
    e = o.e
    xyz = [o.col(direction, i) for i in range(3)]
    basis = []
    for terms in SH_POLYNOMIALS[:count]:
        factors = [[xyz[axis] for axis, power in enumerate(powers) for _ in range(power)] for _, *powers in terms]
        parts = [o.product(o.num(c), *f) if f else filled(e, c, xyz[0]) for (c, *_), f in zip(terms, factors)]
        basis.append(o.total(*parts))
    y = e.mir.reshape(e.mir.concat(*basis, axis=1), new_shape=[n, count, 1])
    raw = e.mir.add(colors, e.mir.reduce(e.mir.mul(y, sh), kind="sum", axes=[1], keep_dim=False))
    return e.mir.max(raw, o.num(0.0))


def _smooth_columns(o: _Ops, op: GaussianSplatRenderOp, n: int) -> dict[str, SSAValue]:
    """Pixel mean, conic, opacity (`[N, 1]` each) and rgb (`[N, 3]`): prepare's smooth columns."""
    e, p = o.e, o.product
    width, height = op.prop("width"), op.prop("height")
    positions, scales, rotations, opacities, colors, sh, meta = op.operands
    m = [e.mir.narrow(meta, axis=0, start=i, len=1) for i in range(16, 22)]
    fx, fy, cx, cy, near, far = m
    view = e.mir.reshape(e.mir.narrow(meta, axis=0, start=0, len=16), new_shape=[4, 4])
    top = e.mir.narrow(view, axis=0, start=0, len=3)
    rot_cam = e.mir.narrow(top, axis=1, start=0, len=3)
    shift = e.mir.reshape(e.mir.narrow(top, axis=1, start=3, len=1), new_shape=[1, 3])
    # covariance R S S^T R^T, seen from the camera
    mat = e.mir.mul(_rotation(o, o.unit(rotations), n), e.mir.reshape(scales, new_shape=[n, 1, 3]))
    cov = e.mir.matmul(mat, e.mir.transpose(mat, perm=[0, 2, 1]))
    cov_cam = e.mir.matmul(e.mir.matmul(rot_cam, cov), e.mir.transpose(rot_cam, perm=[1, 0]))
    cam = e.mir.add(e.mir.matmul(positions, e.mir.transpose(rot_cam, perm=[1, 0])), shift)
    x, y, depth = (o.col(cam, i) for i in range(3))
    in_depth = logical_and(e, e.mir.compare(depth, near, "gt"), e.mir.compare(depth, far, "lt"))
    z = o.where(in_depth, depth, 1.0)
    # the Jacobian at the mean, x/z and y/z clamped to the widened field of view
    ratios = []
    for coord, focal, centre, size in ((x, fx, cx, width), (y, fy, cy, height)):
        margin = e.mir.div(o.num(FOV_MARGIN * 0.5 * size), focal)
        low = e.mir.sub(e.mir.neg(e.mir.div(centre, focal)), margin)
        high = e.mir.add(e.mir.div(e.mir.sub(o.num(float(size)), centre), focal), margin)
        ratios.append(e.mir.min(e.mir.max(e.mir.div(coord, z), low), high))
    zero = filled(e, 0.0, z)
    jac_rows = [e.mir.div(fx, z), zero, e.mir.neg(e.mir.div(p(fx, ratios[0]), z)),
                zero, e.mir.div(fy, z), e.mir.neg(e.mir.div(p(fy, ratios[1]), z))]  # fmt: skip
    jac = e.mir.reshape(e.mir.concat(*jac_rows, axis=1), new_shape=[n, 2, 3])
    cov2d = e.mir.matmul(e.mir.matmul(jac, cov_cam), e.mir.transpose(jac, perm=[0, 2, 1]))
    flat = e.mir.add(e.mir.reshape(cov2d, new_shape=[n, 4]), o.array(EPS2D * np.eye(2).reshape(1, 4)))
    sxx, sxy, syx, syy = (o.col(flat, i) for i in range(4))
    det = e.mir.sub(p(sxx, syy), p(sxy, syx))
    det = o.where(e.mir.compare(det, o.num(0.0), "gt"), det, 1.0)
    off = e.mir.mul(o.num(0.5), e.mir.add(sxy, syx))
    direction = o.unit(e.mir.add(positions, e.mir.matmul(shift, rot_cam)))  # the mean minus -R^T t
    return {
        "u": e.mir.add(e.mir.div(p(fx, x), z), cx),
        "v": e.mir.add(e.mir.div(p(fy, y), z), cy),
        "a": e.mir.div(syy, det),
        "b": e.mir.neg(e.mir.div(off, det)),
        "c": e.mir.div(sxx, det),
        "opacity": e.mir.reshape(opacities, new_shape=[n, 1]),
        "rgb": _sh_colour(o, direction, colors, sh, n, shape_of(sh)[1]),
    }


def _tile_lists(o: _Ops, op: GaussianSplatRenderOp, rows: SSAValue, n: int) -> SSAValue:
    """`[tiles, N]` i1: the (capped) tile lists of the depth-sorted primal rows `rows`.
    Tile t is covered when `floor(lo) <= t < ceil(hi)`, i.e. `lo < t + 1` and `t < hi`, by a
    Gaussian of positive radii (the kernel's finite-mean test holds: prepare's means are finite
    for finite inputs)."""
    e = o.e
    width, height, size = op.prop("width"), op.prop("height"), op.prop("tile_size")
    tiles_x, tiles_y = -(-width // size), -(-height // size)
    ty, tx = np.divmod(np.arange(tiles_x * tiles_y), tiles_x)
    mean, radius = o.col(rows, 0, 2), o.col(rows, 6, 2)
    lo = e.mir.sub(e.mir.div(mean, o.num(float(size))), e.mir.div(radius, o.num(float(size))))
    hi = e.mir.add(e.mir.div(mean, o.num(float(size))), e.mir.div(radius, o.num(float(size))))
    member = None
    for axis, index in ((0, tx), (1, ty)):
        tile = o.array(index.astype(np.float64)[:, None])
        low = e.mir.reshape(o.col(lo, axis), new_shape=[1, n])
        high = e.mir.reshape(o.col(hi, axis), new_shape=[1, n])
        r = e.mir.reshape(o.col(radius, axis), new_shape=[1, n])
        covered = logical_and(e, e.mir.compare(low, e.mir.add(tile, o.num(1.0)), "lt"), e.mir.compare(tile, high, "lt"))
        covered = logical_and(e, covered, e.mir.compare(r, o.num(0.0), "gt"))
        member = covered if member is None else logical_and(e, member, covered)
    limit = op.prop("max_list_entries")
    if limit:
        ones = o.where(member, 1.0, 0.0)
        counts = e.mir.reduce(ones, kind="sum", axes=[1], keep_dim=True)
        rank = e.mir.add(e.mir.cumsum(counts, axis=0, exclusive=True), e.mir.cumsum(ones, axis=1, exclusive=True))
        member = logical_and(e, member, e.mir.compare(rank, o.num(float(limit)), "lt"))
    return member


def render_primitives(e: Emitter, op: GaussianSplatRenderOp) -> SSAValue:
    """The render's image in primitive MIR (see the module docstring)."""
    positions = op.positions
    n = shape_of(positions)[0]
    if n == DYNAMIC:
        raise Unsupported("the forward-mode rule of mir.gaussian_splat_render needs a static number of Gaussians")
    o = _Ops(e, positions)
    width, height, size = op.prop("width"), op.prop("height"), op.prop("tile_size")
    frozen = [e.mir.stop_gradient(v) for v in op.operands]
    rows = e.mir.gaussian_splat_prepare(*frozen, **op.props())
    _, order = e.mir.topk(e.mir.neg(e.mir.reshape(o.col(rows, 5), new_shape=[n])), k=n)
    member = _tile_lists(o, op, e.mir.gather(rows, order, axis=0), n)
    py, px = np.divmod(np.arange(width * height), width)
    tiles_x = -(-width // size)
    member = e.mir.gather(member, e.mir.constant((py // size) * tiles_x + px // size, "i64"), axis=0)  # [P, N]
    smooth = {k: e.mir.gather(v, order, axis=0) for k, v in _smooth_columns(o, op, n).items()}
    g = {k: e.mir.reshape(v, new_shape=[1, n]) for k, v in smooth.items() if k != "rgb"}
    dx = e.mir.sub(o.array(px[:, None] + 0.5), g["u"])
    dy = e.mir.sub(o.array(py[:, None] + 0.5), g["v"])
    half = o.num(0.5)
    sigma = e.mir.add(
        e.mir.mul(half, e.mir.add(o.product(g["a"], dx, dx), o.product(g["c"], dy, dy))),
        o.product(g["b"], dx, dy),
    )
    candidate = logical_and(e, member, e.mir.compare(sigma, o.num(0.0), "ge"))
    falloff = e.mir.exp(e.mir.neg(o.where(candidate, sigma, 0.0)))
    alpha = e.mir.min(o.num(ALPHA_MAX), e.mir.mul(g["opacity"], falloff))
    kept = logical_and(e, candidate, e.mir.compare(alpha, o.num(op.prop("alpha_cutoff")), "ge"))
    alpha = o.where(kept, alpha, 0.0)
    passed = e.mir.sub(o.num(1.0), alpha)
    before = e.mir.exp(e.mir.cumsum(e.mir.log(passed), axis=1, exclusive=True))
    threshold = o.num(op.prop("transmittance_threshold"))
    used = logical_and(e, kept, e.mir.compare(e.mir.mul(before, passed), threshold, "gt"))
    steps = op.prop("max_splat_steps")
    if steps:
        count = e.mir.cumsum(o.where(used, 1.0, 0.0), axis=1)
        used = logical_and(e, used, e.mir.compare(count, o.num(float(steps)), "le"))
    weight = o.where(used, e.mir.mul(alpha, before), 0.0)
    return e.mir.reshape(e.mir.matmul(weight, smooth["rgb"]), new_shape=[height, width, 3])


@JVP_RULES.register(GaussianSplatRenderOp)
def gaussian_splat_render(e: Emitter, op: GaussianSplatRenderOp, tangents: Tangents) -> OutTangents:
    return jvp_of_expansion(e, op, tangents, render_primitives)


JVP_RULES.add(
    GaussianSplatRenderBackwardOp,
    NoJvpRule("the second derivative of the Gaussian rasteriser is not implemented (no Hessian-vector products through it)"),
)
