"""MIR 3-D Gaussian splatting ops (Kerbl et al. 2023, "3D Gaussian Splatting for Real-Time
Radiance Field Rendering"): render, its two halves prepare and rasterize, and render_backward.

Operands (all of one floating-point element type; `N` Gaussians, `?` allowed):

* `positions[N, 3]`: world-space means;
* `scales[N, 3]`: standard deviations along the Gaussian's own axes (not log-scales);
* `rotations[N, 4]`: quaternions `(w, x, y, z)`, normalised by the op;
* `opacities[N]`: in `[0, 1]` (after any sigmoid);
* `colors[N, 3]`: a view-independent RGB offset;
* `sh_coeffs[N, K, 3]`: spherical-harmonic coefficients of bands `0..b`, `K = (b + 1)^2`
  with `b <= 3`; the colour is `max(colors + sum_k Y_k(d) sh_coeffs[:, k], 0)` with `d` the
  unit direction from the camera centre to the mean (Y as in the 3DGS reference code);
* `meta[22]`: the camera (pinhole, OpenCV axes: x right, y down, z forward): elements
  `0..15` the world-to-camera view matrix, row-major 4x4; `16..19` the intrinsics
  `fx, fy, cx, cy` (pixels); `20, 21` the near and far planes (camera-space depth).

The image is `[height, width, 3]` RGB over a black background (no alpha channel). Pixel
`(row, col)` samples the point `(col + 0.5, row + 0.5)`.

Properties: `width`, `height` (pixels); `tile_size` (pixels per tile side); `radius_scale`
(a Gaussian covers `ceil(radius_scale * sigma)` pixels on each image axis, which picks the
tiles it is listed in); `alpha_cutoff` (smaller alphas are skipped); `max_splat_steps` (the
most Gaussians composited per pixel, 0 for no limit); `transmittance_threshold` (a pixel stops
before the Gaussian that would take its transmittance to it or below);
`max_list_entries` (capacity of the (tile, Gaussian) list, 0 for no limit; entries past it,
in (tile, depth) order, are dropped). render_backward adds `loss_grad_clip` (the image
cotangent is clamped to `[-c, c]` first; 0 for none), `sh_band` (coefficients of higher bands
get zero gradient: the progressive SH schedule of 3DGS training) and `max_anisotropy`
(Gaussians whose largest/smallest scale ratio exceeds it get no scale gradient; 0 for none).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_float,
    require_non_negative,
    require_positive,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.traits import COMPUTE
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_shape, tensor

META_SIZE = 22
"""view matrix (16), fx, fy, cx, cy, near, far."""
PREPARED_COLUMNS = 12
"""A prepared row: mean2d (u, v), conic (a, b, c), depth, radius (x, y), opacity, rgb."""
SH_COUNTS = (1, 4, 9, 16)
"""Coefficients of SH bands 0..b, for b = 0..3."""
GAUSSIAN_INPUTS = (
    "positions",
    "scales",
    "rotations",
    "opacities",
    "colors",
    "sh_coeffs",
    "meta",
)
RENDER_PROPERTIES = (
    "width", "height", "tile_size", "radius_scale", "alpha_cutoff",
    "max_splat_steps", "transmittance_threshold", "max_list_entries",
)  # fmt: skip
BACKWARD_PROPERTIES = ("loss_grad_clip", "sh_band", "max_anisotropy")
RENDER_DEFAULTS = {
    "tile_size": 16,
    "radius_scale": 3.33,
    "alpha_cutoff": 1.0 / 255.0,
    "max_splat_steps": 0,
    "transmittance_threshold": 1e-4,
    "max_list_entries": 0,
}
_INTEGER = frozenset(
    {"width", "height", "tile_size", "max_splat_steps", "max_list_entries", "sh_band"}
)


def sh_band(count: int) -> int:
    """The highest SH band of `count` coefficients per colour channel."""
    return SH_COUNTS.index(count)


def packed_columns(sh_count: int) -> int:
    """Columns of render_backward's rows: d positions (3), scales (3), rotations (4),
    opacity (1), colors (3), then the `sh_count x 3` coefficients, row-major (`?` for a `?` count)."""
    return DYNAMIC if sh_count == DYNAMIC else 14 + 3 * sh_count


def _properties(values: dict, names: Sequence[str]) -> dict[str, Attribute]:
    return {
        name: i64_attr(int(values[name]))
        if name in _INTEGER
        else FloatAttr(float(values[name]), f32)
        for name in names
    }


def _render_values(width: int, height: int, options: dict) -> dict:
    """The render properties' values: the defaults, overridden by `options`."""
    return {**RENDER_DEFAULTS, **options, "width": width, "height": height}


def _require_non_negative(op: RlxOperation, values: dict, *names: str) -> None:
    """Reject negative properties among `names`, in that order, naming the first."""
    require_non_negative(op, **{name: values[name] for name in names})


def _format(operands: Sequence[str], names: Sequence[str]) -> str:
    joined = " `,` ".join(f"${name}" for name in operands)
    props = " ".join(f"`{name}` `=` ${name}" for name in names)
    return f"{joined} {props} " + FUNCTIONAL


class SplatOperation(RlxOperation):
    """Reads the properties and checks the operands the four ops share.

    The operands and properties live in the subclasses below, which the ops combine: xDSL
    collects fields along the MRO, so the order of the bases fixes their order."""

    PROPERTIES: ClassVar[tuple[str, ...]] = RENDER_PROPERTIES
    result = result_def(TensorType)
    traits = traits_def(Pure(), COMPUTE)

    def prop(self, name: str) -> int | float:
        attr = getattr(self, name)
        return attr.value.data

    def props(self, names: Sequence[str] | None = None) -> dict[str, int | float]:
        return {name: self.prop(name) for name in (names or self.PROPERTIES)}

    def check_attributes(self) -> None:
        p = self.props()
        require_positive(
            self, width=p["width"], height=p["height"], tile_size=p["tile_size"]
        )
        _require_non_negative(
            self,
            p,
            "max_splat_steps", "max_list_entries",
            "radius_scale", "alpha_cutoff", "transmittance_threshold",
        )  # fmt: skip
        require(
            p["alpha_cutoff"] < 1,
            self,
            lambda: f"alpha_cutoff must be < 1, got {p['alpha_cutoff']}",
        )

    def image_type(self, element: Attribute) -> TensorType:
        return tensor(element, [self.prop("height"), self.prop("width"), 3])

    def check_gaussians(self) -> tuple[TensorType, int]:
        """The seven inputs' shapes; returns the positions' type and the SH coefficient count."""
        types = {name: tensor_type(getattr(self, name)) for name in GAUSSIAN_INPUTS}
        positions = types["positions"]
        require_float(self, positions, "positions")
        require_same_element_type(self, positions, types)
        n = positions.get_shape()[0] if positions.get_num_dims() else DYNAMIC
        sh = types["sh_coeffs"].get_shape()
        count = sh[1] if len(sh) == 3 else DYNAMIC
        expected = {
            "positions": [n, 3], "scales": [n, 3], "rotations": [n, 4], "opacities": [n],
            "colors": [n, 3], "sh_coeffs": [n, count, 3], "meta": [META_SIZE],
        }  # fmt: skip
        for name, shape in expected.items():
            actual = types[name].get_shape()
            require(
                len(actual) == len(shape)
                and all(dims_match(a, e) for a, e in zip(actual, shape)),
                self,
                lambda name=name, shape=shape, actual=actual: (
                    f"{name} must have shape {fmt_shape(shape)}, got {fmt_shape(actual)}"
                ),
            )
        require(
            count in SH_COUNTS or count == DYNAMIC,  # a `?` count is checked when the kernel runs
            self,
            lambda: (
                f"sh_coeffs must hold 1, 4, 9 or 16 coefficients (SH bands 0..3) per channel, got {count}"
            ),
        )
        return positions, count


class RenderPropertiesOperation(SplatOperation):
    """The eight render properties every splat op carries."""

    width = prop_def(IntegerAttr[I64])
    height = prop_def(IntegerAttr[I64])
    tile_size = prop_def(IntegerAttr[I64])
    radius_scale = prop_def(FloatAttr[Float32Type])
    alpha_cutoff = prop_def(FloatAttr[Float32Type])
    max_splat_steps = prop_def(IntegerAttr[I64])
    transmittance_threshold = prop_def(FloatAttr[Float32Type])
    max_list_entries = prop_def(IntegerAttr[I64])


class GaussianInputsOperation(RenderPropertiesOperation):
    """The ops that read the seven Gaussian inputs (render, prepare, render_backward)."""

    positions = operand_def(TensorType)
    scales = operand_def(TensorType)
    rotations = operand_def(TensorType)
    opacities = operand_def(TensorType)
    colors = operand_def(TensorType)
    sh_coeffs = operand_def(TensorType)
    meta = operand_def(TensorType)

    def __init__(self, *inputs: SSAValue, width: int, height: int, **options):
        super().__init__(
            operands=list(inputs),
            properties=_properties(
                _render_values(width, height, options), self.PROPERTIES
            ),
        )


@irdl_op_definition
class GaussianSplatRenderOp(GaussianInputsOperation):
    """Renders N Gaussians to an `[height, width, 3]` image (`GaussianSplatRender`): prepare,
    then rasterize, in one op (see the module docstring for the operands and properties)."""

    name = "mir.gaussian_splat_render"
    assembly_format = _format(GAUSSIAN_INPUTS, RENDER_PROPERTIES)

    def infer_result_types(self) -> Sequence[Attribute]:
        positions, _ = self.check_gaussians()
        return [self.image_type(positions.element_type)]


@irdl_op_definition
class GaussianSplatPrepareOp(GaussianInputsOperation):
    """Projects N Gaussians (`GaussianSplatPrepare`): one `[N, 12]` row each, `u, v` (pixel
    mean), `a, b, c` (the conic: the inverse 2-D covariance `[[a, b], [b, c]]`), depth,
    `radius_x, radius_y` (0 for a culled Gaussian), opacity and the view-dependent RGB."""

    name = "mir.gaussian_splat_prepare"
    assembly_format = _format(GAUSSIAN_INPUTS, RENDER_PROPERTIES)

    def infer_result_types(self) -> Sequence[Attribute]:
        positions, _ = self.check_gaussians()
        return [
            tensor(positions.element_type, [positions.get_shape()[0], PREPARED_COLUMNS])
        ]


@irdl_op_definition
class GaussianSplatRasterizeOp(RenderPropertiesOperation):
    """Bins prepared rows into tiles, sorts them by depth and composites them front to back
    (`GaussianSplatRasterize`) into an `[height, width, 3]` image. `meta` is the camera
    prepare read (rasterize reads none of it: the rows are in pixel space)."""

    name = "mir.gaussian_splat_rasterize"
    prepared = operand_def(TensorType)
    meta = operand_def(TensorType)
    assembly_format = _format(("prepared", "meta"), RENDER_PROPERTIES)

    def __init__(
        self, prepared: SSAValue, meta: SSAValue, *, width: int, height: int, **options
    ):
        super().__init__(
            operands=[prepared, meta],
            properties=_properties(
                _render_values(width, height, options), RENDER_PROPERTIES
            ),
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        prepared, meta = tensor_type(self.prepared), tensor_type(self.meta)
        require_float(self, prepared, "prepared")
        require_same_element_type(self, prepared, {"meta": meta})
        shape = prepared.get_shape()
        require(
            len(shape) == 2 and dims_match(shape[1], PREPARED_COLUMNS),
            self,
            lambda: (
                f"prepared must have shape [N, {PREPARED_COLUMNS}], got {fmt_shape(shape)}"
            ),
        )
        require(
            list(meta.get_shape()) == [META_SIZE],
            self,
            lambda: (
                f"meta must have shape [{META_SIZE}], got {fmt_shape(meta.get_shape())}"
            ),
        )
        return [self.image_type(prepared.element_type)]


class _BackwardFields(SplatOperation):
    """render_backward's own operand and properties, listed after the inherited ones (a base
    placed after `GaussianInputsOperation`, see `SplatOperation`)."""

    grad_output = operand_def(TensorType)
    loss_grad_clip = prop_def(FloatAttr[Float32Type])
    sh_band = prop_def(IntegerAttr[I64])
    max_anisotropy = prop_def(FloatAttr[Float32Type])


@irdl_op_definition
class GaussianSplatRenderBackwardOp(GaussianInputsOperation, _BackwardFields):
    """The gradients of every render input (`GaussianSplatRenderBackward`), packed one row per
    Gaussian, `[N, 14 + 3K]`: d positions (3), d scales (3), d rotations (4), d opacity (1),
    d colors (3), d sh_coeffs (`K x 3`, row-major). The camera gets none."""

    name = "mir.gaussian_splat_render_backward"
    PROPERTIES: ClassVar[tuple[str, ...]] = RENDER_PROPERTIES + BACKWARD_PROPERTIES
    assembly_format = _format(
        (*GAUSSIAN_INPUTS, "grad_output"), RENDER_PROPERTIES + BACKWARD_PROPERTIES
    )

    def __init__(
        self,
        *inputs: SSAValue,
        width: int,
        height: int,
        loss_grad_clip: float = 0.0,
        sh_band: int = 3,
        max_anisotropy: float = 0.0,
        **options,
    ):
        super().__init__(
            *inputs,
            width=width,
            height=height,
            **options,
            loss_grad_clip=loss_grad_clip,
            sh_band=sh_band,
            max_anisotropy=max_anisotropy,
        )

    def check_attributes(self) -> None:
        super().check_attributes()
        _require_non_negative(
            self, self.props(), "sh_band", "loss_grad_clip", "max_anisotropy"
        )

    def infer_result_types(self) -> Sequence[Attribute]:
        positions, count = self.check_gaussians()
        grad = tensor_type(self.grad_output)
        image = self.image_type(positions.element_type)
        require(
            grad.element_type == image.element_type
            and len(grad.get_shape()) == len(image.get_shape())
            and all(map(dims_match, grad.get_shape(), image.get_shape())),
            self,
            lambda: f"grad_output must have the image type {image}, got {grad}",
        )
        return [
            tensor(
                positions.element_type,
                [positions.get_shape()[0], packed_columns(count)],
            )
        ]


OPS = [
    GaussianSplatRenderOp,
    GaussianSplatPrepareOp,
    GaussianSplatRasterizeOp,
    GaussianSplatRenderBackwardOp,
]
ATTRIBUTES: list[type] = []
