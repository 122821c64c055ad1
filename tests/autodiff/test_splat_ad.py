"""Differentiating Gaussian splats: rlx-prepare-ad fuses prepare then rasterize into a render
(same numbers), rlx-grad's render rule matches central differences through the whole graph,
the camera gets zeros, and render_backward passes no gradient."""

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.autodiff.jvp import build_jvp
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import splat
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.oracles import run_op

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


def render_module(**options):
    """`@f`: one render, in f64."""
    b = GraphBuilder("f")
    args = [b.param(name, shape, "f64") for name, shape in zip(splat.GAUSSIAN_INPUTS, SHAPES)]
    b.output(b.mir.gaussian_splat_render(*args, **SIZE, **options))
    return b.module()


CAPPED = {"max_splat_steps": 2, "max_list_entries": 6, "transmittance_threshold": 0.5}


def jvp_module(**options):
    module = render_module(**options)
    build_jvp(module, "f", list(splat.GAUSSIAN_INPUTS[:6]))
    return module


@pytest.mark.parametrize("options", [{}, CAPPED], ids=["default", "capped"])
def test_render_tangent_matches_central_differences(options):
    """Each of the six Gaussian inputs moved alone along a random direction: the whole image's
    tangent against `(f(x + eps d) - f(x - eps d)) / 2 eps` (the caps bind in `capped`; one
    Gaussian's red is clamped at 0)."""
    module, inputs = jvp_module(**options), scene()
    inputs[4][0, 0] -= 1.5
    rng = np.random.default_rng(1)
    for index in range(6):
        tangents = [np.zeros_like(x) for x in inputs[:6]]
        tangents[index] = rng.standard_normal(inputs[index].shape)
        outputs = run_function(module, "f_jvp", [*inputs, *tangents])

        def moved(sign):
            args = list(inputs)
            args[index] = inputs[index] + sign * 1e-6 * tangents[index]
            return run_function(module, "f", args)[0]

        expected = (moved(1) - moved(-1)) / 2e-6
        assert np.abs(expected).max() > 1e-3, splat.GAUSSIAN_INPUTS[index]
        np.testing.assert_allclose(outputs[1], expected, rtol=1e-5, atol=1e-6, err_msg=splat.GAUSSIAN_INPUTS[index])


def test_render_tangent_is_the_transpose_of_render_backward():
    """`<J t, g> = <t, J^T g>` with J^T from the render's reverse kernel, every input at once."""
    module, inputs = jvp_module(**CAPPED), scene()
    rng = np.random.default_rng(2)
    tangents = [rng.standard_normal(x.shape) for x in inputs[:6]]
    (_, image_tangent) = run_function(module, "f_jvp", [*inputs, *tangents])
    g = rng.standard_normal((8, 10, 3))
    packed = run_op("gaussian_splat_render_backward", [*inputs, g], **SIZE, **CAPPED, sh_band=1)
    flat = np.concatenate([t.reshape(3, -1) for t in tangents], axis=1)
    np.testing.assert_allclose(np.sum(image_tangent * g), np.sum(packed * flat), rtol=1e-10)


def test_the_capped_options_bind_on_this_scene():
    """So the capped tangent test covers each cut-off."""
    inputs = scene()
    capped = run_op("gaussian_splat_render", inputs, **SIZE, **CAPPED)
    for name, free in (("max_splat_steps", 0), ("max_list_entries", 0), ("transmittance_threshold", 1e-4)):
        lifted = run_op("gaussian_splat_render", inputs, **SIZE, **{**CAPPED, name: free})
        assert np.abs(lifted - capped).max() > 0.03, name


def test_forward_mode_names_the_prepare_step_for_a_decomposed_half():
    """prepare and rasterize have no rule in either mode: the error names the fusing step;
    the module is left unchanged."""
    module = decomposed()
    before = str(module)
    with pytest.raises(OpError, match="the 'fuse-decomposed-gaussian-splat' step of rlx-prepare-ad rewrites it") as error:
        build_jvp(module, "f", ["positions"])
    assert error.value.op.name == "mir.gaussian_splat_prepare"
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


def test_forward_mode_needs_a_static_number_of_gaussians():
    from rlx_xdsl.shapes import DYNAMIC

    b = GraphBuilder("f")
    shapes = [s if s == [22] else [DYNAMIC, *s[1:]] for s in SHAPES]  # meta keeps [22]
    args = [b.param(name, shape, "f64") for name, shape in zip(splat.GAUSSIAN_INPUTS, shapes)]
    b.output(b.mir.gaussian_splat_render(*args, **SIZE))
    module = b.module()
    with pytest.raises(OpError, match="needs a static number of Gaussians"):
        build_jvp(module, "f", ["positions"])
