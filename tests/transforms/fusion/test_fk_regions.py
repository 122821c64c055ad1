"""RLX's FK region passes: results unchanged (interpreter, against a numpy oracle), the
report's counters, and rlx-prepare-ad seeing through the new ops."""

from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
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
