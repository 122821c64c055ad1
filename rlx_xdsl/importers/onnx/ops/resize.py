"""Resize (opset 19: nearest, linear and cubic, every coordinate transformation mode,
antialias, `exclude_outside`, `axes`, `keep_aspect_ratio_policy`, `tf_crop_and_resize`'s
`roi` and `extrapolation_value`) with compile-time `roi`, `scales` and `sizes`.

Resize is separable and linear in X along each resized axis: output `j` of an axis is
`sum_i W[j, i] * x[i]` (plus `extrapolation_value` where `tf_crop_and_resize` maps `j`
outside the input). `W` is computed at import time by ONNX's reference (its 1-D
interpolation `_interpolate_1d_with_x` applied to each unit vector), so the coefficients
are the reference's own. Axes are applied innermost first, as the reference nests them.
`nearest` becomes a `mir.gather` of the picked indices (exact, any dtype); the others a
`mir.matmul` with `W` (floats only). Shapes must be static.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dtypes import dtype_named
from rlx_xdsl.importers.onnx.table import rule
from rlx_xdsl.shapes import DYNAMIC


def _text(value, default: str) -> str:
    if value is None:
        return default
    return value.decode() if isinstance(value, bytes) else value


def _coefficients(t):
    """The reference's `get_coeffs(ratio, scale)` for the node's mode (as its `Resize._run`)."""
    from onnx.reference.ops import op_resize as ref

    mode = _text(t.attr("mode"), "nearest")
    antialias = t.attr("antialias", 0)
    if mode == "nearest":
        if antialias:
            raise t.fail("antialias is not defined for mode 'nearest'")
        nearest = _text(t.attr("nearest_mode"), "round_prefer_floor")
        return mode, lambda ratio, scale: ref._nearest_coeffs(ratio, mode=nearest)
    if mode == "cubic":
        cubic = ref._cubic_coeffs_antialias if antialias else ref._cubic_coeffs
        a = t.attr("cubic_coeff_a", -0.75)
        return mode, lambda ratio, scale: cubic(ratio, scale, A=a)
    if mode == "linear":
        return mode, ref._linear_coeffs_antialias if antialias else ref._linear_coeffs
    raise t.fail(f"Resize mode '{mode}' is not supported")


def _scales_and_sizes(t, shape: list[int], axes: list[int]) -> tuple[list, list[int]]:
    """Per resized axis, the scale and the output size, as the reference's `_interpolate_nd`."""
    scales = t.static(2, "scales")
    sizes = t.static(3, "sizes")
    if sizes is not None and sizes.size:
        factors = [sizes[i] / shape[a] for i, a in enumerate(axes)]
        policy = _text(t.attr("keep_aspect_ratio_policy"), "stretch")
        if policy == "stretch":
            return factors, [int(s) for s in sizes]
        if policy not in ("not_larger", "not_smaller"):
            raise t.fail(f"keep_aspect_ratio_policy '{policy}' is not supported")
        scale = min(factors) if policy == "not_larger" else max(factors)
        return [scale] * len(axes), [int(scale * shape[a] + 0.5) for a in axes]
    if scales is None or not scales.size:
        raise t.fail("Resize needs scales or sizes")
    out = (scales * np.array([shape[a] for a in axes])).astype(int)
    return list(scales), [int(n) for n in out]


def _axis_weights(t, get_coeffs, n: int, m: int, scale, roi) -> tuple[np.ndarray, np.ndarray | None]:
    """`W` (m x n) of one axis, and where `tf_crop_and_resize` extrapolates (m booleans) or None."""
    from onnx.reference.ops import op_resize as ref

    mode = _text(t.attr("coordinate_transformation_mode"), "half_pixel")
    exclude = bool(t.attr("exclude_outside", 0))

    def at(data, j, extrapolation=0.0):
        return ref._interpolate_1d_with_x(data, scale, m, j, get_coeffs, roi, extrapolation, mode, exclude)

    eye = np.eye(n)
    weights = np.array([[at(eye[i], j) for i in range(n)] for j in range(m)], dtype=np.float64).reshape(m, n)
    if mode != "tf_crop_and_resize":
        return weights, None
    outside = np.array([at(np.zeros(n), j, extrapolation=1.0) for j in range(m)]) == 1.0
    return weights, outside if outside.any() else None


@rule("Resize")
def resize(t, node):
    x = t.value(0)
    shape, rank, dtype = t.shape(x), t.rank(x), t.dtype(x)
    if DYNAMIC in shape:
        raise t.fail("Resize of a tensor with dynamic dims is not supported")
    axes = [a % rank for a in t.attr("axes", list(range(rank)))]
    factors, sizes = _scales_and_sizes(t, shape, axes)
    roi = t.static(1, "roi") if t.input(1) is not None else None
    roi = None if roi is None or not roi.size else roi
    mode, get_coeffs = _coefficients(t)
    if mode != "nearest" and not dtype_named(dtype).is_float:
        raise t.fail(f"Resize mode '{mode}' of {dtype} is not supported (only 'nearest' for integers)")
    extrapolation = float(t.attr("extrapolation_value", 0.0))
    e = t.e.mir
    for i in reversed(range(len(axes))):
        a, n, m = axes[i], shape[axes[i]], sizes[i]
        axis_roi = None if roi is None else np.array([roi[i], roi[len(axes) + i]])
        weights, outside = _axis_weights(t, get_coeffs, n, m, factors[i], axis_roi)
        if mode == "nearest" and outside is None:
            x = e.gather(x, t.constant(weights.argmax(axis=1), "i64"), axis=a)
            continue
        perm = [d for d in range(rank) if d != a] + [a]
        moved = e.transpose(x, perm=perm) if a != rank - 1 else x
        rest = [shape[d] for d in perm[:-1]]
        flat = e.reshape(moved, new_shape=[int(np.prod(rest)), n])
        out = e.matmul(flat, t.constant(weights.T, dtype))
        if outside is not None:
            out = e.add(out, t.constant(np.where(outside, extrapolation, 0.0), dtype))
        out = e.reshape(out, new_shape=[*rest, m])
        x = e.transpose(out, perm=[int(p) for p in np.argsort(perm)]) if a != rank - 1 else out
        shape = shape[:a] + [m] + shape[a + 1 :]
    return x
