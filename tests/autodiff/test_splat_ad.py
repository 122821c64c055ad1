"""Differentiating Gaussian splats: rlx-prepare-ad fuses prepare then rasterize into a render
(same numbers), rlx-grad's render rule matches central differences through the whole graph,
the camera gets zeros, and render_backward passes no gradient."""

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.autodiff.jvp import build_jvp
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.diagnostics import OpError
from rlx_xdsl.dialects.mir import splat
from rlx_xdsl.interpreters import run_function
from rlx_xdsl.testing.gradcheck import check_gradients

SIZE = {"width": 10, "height": 8, "tile_size": 4}
SHAPES = ([3, 3], [3, 3], [3, 4], [3], [3, 3], [3, 4, 3], [22])


def scene() -> list[np.ndarray]:
    rng = np.random.default_rng(4)
    view = np.eye(4)
    view[:3, 3] = [0.1, -0.1, 3.0]
    meta = np.concatenate([view.ravel(), [9.0, 9.0, 5.2, 3.9, 0.01, 100.0]])
    return [
        np.column_stack(
            [
                rng.uniform(-0.8, 0.8, 3),
                rng.uniform(-0.6, 0.6, 3),
                rng.uniform(-0.5, 0.5, 3),
            ]
        ),
        rng.uniform(0.15, 0.35, (3, 3)),
        rng.standard_normal((3, 4)),
        rng.uniform(0.4, 0.9, 3),
        rng.uniform(0.2, 0.8, (3, 3)),
        0.3 * rng.standard_normal((3, 4, 3)),
        meta,
    ]


def decomposed():
    """`@f`: prepare then rasterize, in f64."""
    b = GraphBuilder("f")
    args = [
        b.param(name, shape, "f64")
        for name, shape in zip(splat.GAUSSIAN_INPUTS, SHAPES)
    ]
    rows = b.mir.gaussian_splat_prepare(*args, **SIZE)
    b.output(b.mir.gaussian_splat_rasterize(rows, args[6], **SIZE))
    return b.module()


def test_prepare_ad_fuses_the_pair_into_a_render_with_the_same_image():
    module, inputs = decomposed(), scene()
    (before,) = run_function(module, "f", inputs)
    prepare_for_ad(module)
    names = [op.name for op in module.walk()]
    assert (
        "mir.gaussian_splat_render" in names
        and "mir.gaussian_splat_prepare" not in names
    )
    (after,) = run_function(module, "f", inputs)
    assert np.abs(before).max() > 0.1
    np.testing.assert_array_equal(after, before)


def test_gradients_through_the_fused_pair_match_central_differences():
    module = decomposed()
    prepare_for_ad(module)
    check_gradients(module, "f", scene(), wrt=range(6), rtol=1e-5, atol=1e-7)


def test_the_camera_gets_zeros():
    module = decomposed()
    prepare_for_ad(module)
    build_gradient(module, "f", ["meta"], Mode.STRICT)
    inputs = scene()
    _, d_meta = run_function(module, "f_grad", [*inputs, np.ones((8, 10, 3))])
    assert d_meta.shape == (22,) and not d_meta.any()


def test_render_backward_passes_no_gradient():
    b = GraphBuilder("f")
    args = [
        b.param(name, shape, "f64")
        for name, shape in zip(splat.GAUSSIAN_INPUTS, SHAPES)
    ]
    grad = b.param("g", [8, 10, 3], "f64")
    b.output(b.mir.gaussian_splat_render_backward(*args, grad, **SIZE))
    module = b.module()
    with pytest.raises(OpError, match="no gradient reaches argument 'positions'"):
        build_gradient(module, "f", ["positions"], Mode.STRICT)


def render_module():
    """`@f`: one render, in f64."""
    b = GraphBuilder("f")
    args = [b.param(name, shape, "f64") for name, shape in zip(splat.GAUSSIAN_INPUTS, SHAPES)]
    b.output(b.mir.gaussian_splat_render(*args, **SIZE))
    return b.module()


@pytest.mark.parametrize(
    ("build", "reason"),
    [
        (render_module, "forward mode through the Gaussian rasteriser is not implemented"),
        (decomposed, "the 'fuse-decomposed-gaussian-splat' step of rlx-prepare-ad rewrites it"),
    ],
)
def test_forward_mode_refuses_the_render_with_its_reason(build, reason):
    """A located error naming the reason (the render) or the prepare step (a decomposed half),
    never a silent zero tangent; the module is left unchanged."""
    module = build()
    before = str(module)
    with pytest.raises(OpError, match=reason) as error:
        build_jvp(module, "f", ["positions"])
    assert error.value.op.name.startswith("mir.gaussian_splat_")
    assert str(module) == before


def test_forward_over_reverse_refuses_render_backward():
    """The tangent of render_backward (what rlx-hvp pushes through a gradient) is refused, not zero."""
    b = GraphBuilder("f")
    args = [b.param(name, shape, "f64") for name, shape in zip(splat.GAUSSIAN_INPUTS, SHAPES)]
    grad = b.param("g", [8, 10, 3], "f64")
    b.output(b.mir.gaussian_splat_render_backward(*args, grad, **SIZE))
    module = b.module()
    with pytest.raises(OpError, match="second derivative of the Gaussian rasteriser"):
        build_jvp(module, "f", ["positions"])
