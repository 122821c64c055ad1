"""Recipes of the Gaussian-splatting MIR ops: a few Gaussians, a small image, and a camera
constant looking down +z at the origin from 3 units away (random cameras would see nothing)."""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.mir.splat import (
    PREPARED_COLUMNS,
    GaussianSplatPrepareOp,
    GaussianSplatRasterizeOp,
    GaussianSplatRenderBackwardOp,
    GaussianSplatRenderOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import GraphState, dense


def _camera(s: GraphState, width: int, height: int):
    view = np.eye(4)
    view[2, 3] = 3.0
    meta = np.concatenate(
        [view.ravel(), [width, width, width / 2, height / 2, 0.01, 100.0]]
    )
    return s.emit(ConstantOp, dense(meta, "f32"))


def _sizes(s: GraphState) -> dict:
    return {
        "width": s.integer(2, 6),
        "height": s.integer(2, 6),
        "tile_size": s.choice((2, 4, 16)),
    }


def _gaussians(s: GraphState, sizes: dict) -> list:
    n, count = s.integer(1, 3), s.choice((1, 4))
    shapes = [(n, 3), (n, 3), (n, 4), (n,), (n, 3), (n, count, 3)]
    return [s.operand(shape, param=True) for shape in shapes] + [
        _camera(s, sizes["width"], sizes["height"])
    ]


@RECIPES.register(GaussianSplatRenderOp, GaussianSplatPrepareOp)
def render(s: GraphState, op: OpClass) -> None:
    sizes = _sizes(s)
    s.emit(op, *_gaussians(s, sizes), **sizes)


def _prepare(v) -> bool:
    return isinstance(v.owner, GaussianSplatPrepareOp)


@RECIPES.register(GaussianSplatRasterizeOp)
def rasterize(s: GraphState, op: OpClass) -> None:
    """Often the rows of a prepare already drawn (same image size: the pair rlx-prepare-ad fuses)."""
    prepared = s.pick(_prepare) if s.flag() else None
    if prepared is not None:
        sizes = {
            **_sizes(s),
            "width": prepared.owner.prop("width"),
            "height": prepared.owner.prop("height"),
        }
    else:
        sizes = _sizes(s)
        prepared = s.operand((s.integer(1, 3), PREPARED_COLUMNS))
    s.emit(op, prepared, _camera(s, sizes["width"], sizes["height"]), **sizes)


@RECIPES.register(GaussianSplatRenderBackwardOp)
def render_backward(s: GraphState, op: OpClass) -> None:
    sizes = _sizes(s)
    grad = s.operand((sizes["height"], sizes["width"], 3))
    s.emit(op, *_gaussians(s, sizes), grad, **sizes)
