"""`rlx-lower-group-norm` and `rlx-lower-resize-nearest-2x`: the primitive graphs compute what
the kernels compute (random graphs through the interpreter, and PyTorch)."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import elementwise, norm, shape, vision
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.lower_logical_kernels import LowerGroupNormPass, LowerResizeNearest2xPass

PASSES = (LowerGroupNormPass(), LowerResizeNearest2xPass())
LOWERED = (norm.GroupNormOp, vision.ResizeNearest2xOp)


def lower(module):
    for p in PASSES:
        p.apply(Context(), module)
    module.verify()
    return module


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=4, ops=[*LOWERED, elementwise.AddOp, shape.TransposeOp]))
def test_lowered_random_graphs_compute_what_the_kernels_compute(module):
    inputs = inputs_for(module)
    before = run_function(module, "main", inputs)
    lower(module)
    assert not any(isinstance(op, LOWERED) for op in module.walk())
    after = run_function(module, "main", inputs)
    for a, b in zip(after, before):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=2e-2, atol=2e-2)


def test_resize_lowering_repeats_pixels_as_torch_nearest():
    """Not RLX's tiling: each pixel becomes a 2x2 block."""
    b = GraphBuilder("f")
    b.output(b.resize_nearest_2x(b.input("x", [DYNAMIC, 2, 2, 3])))
    module = lower(b.module())
    x = np.arange(12, dtype=np.float32).reshape(1, 2, 2, 3) * np.float32(1.5)
    (out,) = run_function(module, "f", [x])
    np.testing.assert_array_equal(out, F.interpolate(torch.from_numpy(x), scale_factor=2, mode="nearest").numpy())


def test_group_norm_lowering_matches_torch():
    b = GraphBuilder("f")
    x, g, s = b.input("x", [2, 6, 3, DYNAMIC]), b.input("g", [6]), b.input("s", [6])
    b.output(b.group_norm(x, g, s, num_groups=3, eps=1e-5))
    module = lower(b.module())
    assert [op.name for op in module.walk() if op.name == "mir.layer_norm"] == ["mir.layer_norm"]
    rng = np.random.default_rng(3)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in ((2, 6, 3, 4), (6,), (6,))]
    (out,) = run_function(module, "f", arrays)
    ref = F.group_norm(*(torch.from_numpy(a) for a in arrays[:1]), 3, *(torch.from_numpy(a) for a in arrays[1:]), 1e-5)
    np.testing.assert_allclose(out, ref.numpy(), rtol=1e-5, atol=1e-5)


def test_two_dynamic_dims_are_reported_at_the_op():
    b = GraphBuilder("f")
    b.output(b.resize_nearest_2x(b.input("x", [DYNAMIC, 2, DYNAMIC, 3])))
    with pytest.raises(OpError, match=r"'mir.resize_nearest_2x' cannot be lowered: shape \[\?, 2, \?, 1, 3, 1\] has more"):
        lower(b.module())
