"""rlx-fusion-pipeline treats the Gaussian-splat ops as boundaries (RLX's `is_fusion_boundary`):
on every target they stay whole, elementwise chains on either side fuse without them, the
prepare/rasterize pair is not fused (only rlx-prepare-ad fuses it), and the outputs are kept."""

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects import func

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import splat
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.fusion.pipeline import TARGETS, FusionPipelinePass

SIZE = {"width": 8, "height": 6, "tile_size": 4}


def camera() -> np.ndarray:
    view = np.eye(4)
    view[2, 3] = 3.0
    return np.concatenate([view.ravel(), [8.0, 8.0, 4.0, 3.0, 0.01, 100.0]]).astype(
        np.float32
    )


def graph():
    """`exp`/`tanh` chains before the render and the pair, `mul`/`add` chains after them."""
    b = GraphBuilder("f")
    shapes = ([3, 3], [3, 3], [3, 4], [3], [3, 3], [3, 1, 3])
    p, s, q, o, c, sh = (
        b.input(n, shape) for n, shape in zip(splat.GAUSSIAN_INPUTS, shapes)
    )
    meta = b.input("meta", [22])
    scales = b.mul(b.exp(s), b.exp(s))
    colors = b.tanh(b.add(c, c))
    inputs = [p, scales, q, b.sigmoid(o), colors, sh, meta]
    image = b.mir.gaussian_splat_render(*inputs, **SIZE)
    rows = b.mir.gaussian_splat_prepare(*inputs, **SIZE)
    pair = b.mir.gaussian_splat_rasterize(rows, meta, **SIZE)
    b.output(b.add(b.mul(image, image), image), b.sub(b.tanh(pair), pair))
    return b.module()


def arrays():
    rng = np.random.default_rng(0)
    shapes = ([3, 3], [3, 3], [3, 4], [3], [3, 3], [3, 1, 3])
    values = [rng.standard_normal(shape).astype(np.float32) * 0.3 for shape in shapes]
    return values + [camera()]


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_splat_ops_stay_whole_and_outputs_are_kept(target):
    module = graph()
    before = run_function(module, "f", arrays())
    FusionPipelinePass(target=target).apply(Context(), module)
    module.verify()
    names = [op.name for op in module.walk()]
    for op in (
        splat.GaussianSplatRenderOp,
        splat.GaussianSplatPrepareOp,
        splat.GaussianSplatRasterizeOp,
    ):
        assert names.count(op.name) == 1, (target, op.name)
    for op in module.walk():
        if isinstance(op, tuple(splat.OPS)):  # never inside a fused region's body
            assert isinstance(op.parent_op(), func.FuncOp), (target, op.name)
    after = run_function(module, "f", arrays())
    for x, y in zip(before, after):
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-6)
    assert np.abs(before[0]).max() > 0
