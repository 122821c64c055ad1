"""RLX's FK region passes: results unchanged (interpreter, against a numpy oracle), the
report's counters, and rlx-prepare-ad seeing through the new ops; each pass and every
target's pipeline on the U-Net decoder block and the batch pre-processing graph (against
PyTorch). Random graphs: test_random_graphs.py."""

from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.vision_graphs import batch_preprocess, batch_preprocess_upsampled, unet_decoder_block
from rlx_xdsl.transforms import FUSION_PASSES
from rlx_xdsl.transforms.fusion.fk_regions import FuseBatchPreprocessPass
from rlx_xdsl.transforms.fusion.metrics import kernel_stats
from rlx_xdsl.transforms.fusion.pipeline import TARGETS, FusionPipelinePass
from rlx_xdsl.transforms.fusion.report import FusionReport

GRAPH = (Path(__file__).parent / "fk_regions_graph.mlir").read_text()


def _inputs():
    rng = np.random.default_rng(0)
    return [rng.standard_normal(s).astype(np.float32) for s in [(1, 2, 2, 2), (1, 2, 4, 4), (4, 2, 3, 3), (1, 2, 1, 1)]]


def _oracle(x, a, b, _m):
    up = lambda t: t.repeat(2, axis=2).repeat(2, axis=3)  # noqa: E731  (F.interpolate nearest, x2)
    relu = lambda t: np.maximum(t, 0)  # noqa: E731
    return [np.tanh(a + up(x)), up(up(x)), np.concatenate([relu(b[2:]), relu(b[:2])]), relu(up(x))]


@pytest.mark.parametrize("options", ["target=cuda", "target=cpu", "target=tpu", "target=cuda native-fk-regions=false"])
def test_pipeline_keeps_results(options):
    module = parse_module(GRAPH)
    kwargs = dict(item.split("=") for item in options.split())
    FusionPipelinePass(
        target=kwargs["target"], **({"native_fk_regions": False} if "native-fk-regions" in kwargs else {})
    ).apply(make_context(), module)
    module.verify()
    for got, want in zip(run_function(module, "f", _inputs()), _oracle(*_inputs()), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def _fused(**options):
    module = parse_module(GRAPH)
    FusionPipelinePass(target="cuda", **options).apply(make_context(), module)
    return FusionReport.analyze(parse_module(GRAPH), module)


def test_transform_region_counter():
    assert _fused().transform_region == 1
    assert _fused(native_fk_regions=False).transform_region == 0


def test_batch_region_counter():
    assert _fused().batch_elementwise_region == 1
    assert _fused(fuse_batch_preprocess=False).batch_elementwise_region == 0


def test_fk_prologue_counter_counts_regions_twice():
    report = _fused()
    assert report.fk_prologue_region == 2 and report.elementwise_region == 2
    assert _fused(fuse_region_prologue=False).fk_prologue_region == 0


def test_prepare_ad_sees_through_the_regions():
    from rlx_xdsl.autodiff.prepare import unfuse

    module = parse_module(GRAPH)
    FusionPipelinePass(target="cuda").apply(make_context(), module)
    unfuse(module)
    names = {op.name for op in module.walk()}
    assert not names & {"mir.elementwise_region", "mir.transform_region", "mir.batch_elementwise_region"}
    for got, want in zip(run_function(module, "f", _inputs()), _oracle(*_inputs()), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-6)


def test_batch_preprocess_keeps_slices_a_shared_input_broadcasts():
    """A shared input that broadcasts a slice to a larger shape: no batch region (whose body
    maps a slice to a slice of the result); before the fix the pass built one that failed to verify."""
    module = parse_module(
        """
func.func @f(%x: tensor<2xf32>, %s: tensor<2x1xf32>) -> tensor<4x1xf32> {
  %a = mir.narrow %x axis = 0 start = 0 len = 1 : (tensor<2xf32>) -> tensor<1xf32>
  %b = mir.narrow %x axis = 0 start = 1 len = 1 : (tensor<2xf32>) -> tensor<1xf32>
  %ra = mir.elementwise_region (%a, %s) : (tensor<1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32> {
  ^bb0(%p: tensor<1xf32>, %q: tensor<2x1xf32>):
    %y = mir.add %p, %q : (tensor<1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    mir.yield %y : tensor<2x1xf32>
  }
  %rb = mir.elementwise_region (%b, %s) : (tensor<1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32> {
  ^bb0(%p: tensor<1xf32>, %q: tensor<2x1xf32>):
    %y = mir.add %p, %q : (tensor<1xf32>, tensor<2x1xf32>) -> tensor<2x1xf32>
    mir.yield %y : tensor<2x1xf32>
  }
  %c = mir.concat %ra, %rb axis = 0 : (tensor<2x1xf32>, tensor<2x1xf32>) -> tensor<4x1xf32>
  func.return %c : tensor<4x1xf32>
}
"""
    )
    FuseBatchPreprocessPass().apply(make_context(), module)
    module.verify()
    assert "mir.batch_elementwise_region" not in str(module)
    x, s = np.array([1.0, 2.0], np.float32), np.array([[10.0], [20.0]], np.float32)
    np.testing.assert_array_equal(run_function(module, "f", [x, s])[0], np.concatenate([x[0] + s, x[1] + s]))


# The vision graphs (rlx_xdsl.testing.vision_graphs), against PyTorch, after each FK pass in
# rlx-fusion-pipeline's order, and after every target's pipeline.

FK_ORDER = (
    "rlx-mark-elementwise-regions",
    "rlx-mark-batch-slice-regions",
    "rlx-mark-transform-regions",
    "rlx-fuse-region-prologue",
    "rlx-fuse-batch-preprocess",
    "rlx-decompose-fusion-regions",
)


def _torch_decoder(x, w, bias, gamma, beta, w_skip):
    import torch
    import torch.nn.functional as F

    x, w, bias, gamma, beta, w_skip = map(torch.from_numpy, (x, w, bias, gamma, beta, w_skip))
    up = lambda t: F.interpolate(t, scale_factor=2, mode="nearest")  # noqa: E731
    h = F.silu(F.group_norm(F.conv2d(up(x), w, padding=1) + bias, 2, gamma, beta, eps=1e-5))
    return [(h + up(F.conv2d(x, w_skip))).numpy()]


def _torch_preprocess(images, masks, mean, inv_std):
    import torch

    images, masks, mean, inv_std = map(torch.from_numpy, (images, masks, mean, inv_std))
    return [torch.tanh((images - mean) * inv_std).numpy(), torch.relu(masks).numpy()]


def _torch_preprocess_upsampled(images, mean, inv_std):
    import torch
    import torch.nn.functional as F

    images, mean, inv_std = map(torch.from_numpy, (images, mean, inv_std))
    return [torch.tanh((F.interpolate(images, scale_factor=2, mode="nearest") - mean) * inv_std).numpy()]


VISION = {
    "decoder": (unet_decoder_block, _torch_decoder),
    "preprocess": (batch_preprocess, _torch_preprocess),
    "preprocess_upsampled": (batch_preprocess_upsampled, _torch_preprocess_upsampled),
}


def _vision(graph):
    build, oracle = VISION[graph]
    module = build()
    inputs = random_inputs(find_function(module), seed=0)
    return module, inputs, oracle(*inputs)


def _assert_results(module, inputs, want):
    module.verify()
    for got, expected in zip(run_function(module, None, inputs), want, strict=True):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("graph", sorted(VISION))
def test_each_fk_pass_keeps_the_vision_graphs_results(graph):
    module, inputs, want = _vision(graph)
    _assert_results(module, inputs, want)
    for name in FK_ORDER:
        before = run_function(module, None, inputs)
        FUSION_PASSES[name]()().apply(make_context(), module)
        _assert_results(module, inputs, want)
        for got, old in zip(run_function(module, None, inputs), before, strict=True):
            np.testing.assert_array_equal(got, old)  # the passes regroup elementwise ops only


@pytest.mark.parametrize("target", sorted(TARGETS))
@pytest.mark.parametrize("graph", sorted(VISION))
def test_every_pipeline_keeps_the_vision_graphs_results(graph, target):
    module, inputs, want = _vision(graph)
    FusionPipelinePass(target=target).apply(make_context(), module)
    _assert_results(module, inputs, want)


def test_vision_graphs_fuse_into_fk_regions_on_cuda():
    """The decoder: a transform region (resize -> conv) and a prologue (the shortcut's resize
    into the residual add's region), 8 -> 6 kernels; the pre-processing: two batch regions
    (4 slices each), 18 -> 2 kernels; the upsampled pre-processing: one batch region whose
    prologue reads each slice upsampled, 17 -> 1 kernels."""
    counts = {}
    for graph, (build, _) in VISION.items():
        module = build()
        FusionPipelinePass(target="cuda").apply(make_context(), module)
        report = FusionReport.analyze(build(), module)
        counts[graph] = (
            kernel_stats(build()).kernels,
            kernel_stats(module).kernels,
            report.transform_region,
            report.fk_prologue_region,
            report.batch_elementwise_region,
        )
    assert counts == {
        "decoder": (8, 6, 1, 1, 0),
        "preprocess": (18, 2, 0, 0, 2),
        "preprocess_upsampled": (17, 1, 0, 0, 1),
    }
