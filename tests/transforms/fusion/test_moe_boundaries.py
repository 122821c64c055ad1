"""Fusion treats the MoE and LoRA matmuls as BLAS calls (COMPUTE ops): elementwise regions
and the fusion pipeline grow around them, never into them, and keep their values."""

import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.fused_regions import ElementwiseRegionOp
from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms.fusion.elementwise_regions import MarkElementwiseRegionsPass
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass


def moe_graph():
    """`silu(grouped_matmul(h, w, e)) * 2` where `h = tanh(x) + 1`, and a LoRA layer beside it."""
    b = GraphBuilder("f")
    x, w, e = b.input("x", [4, 3]), b.param("w", [2, 3, 5]), b.input("e", [4], "i64")
    h = b.add(b.tanh(x), b.constant(np.float32(1.0), "f32"))
    expert = b.mul(b.silu(b.grouped_matmul(h, w, e)), b.constant(np.float32(2.0), "f32"))
    lora = b.lora_matmul(h, b.param("wl", [3, 5]), b.param("a", [3, 1]), b.param("bl", [1, 5]), scale=0.5)
    b.output(b.add(expert, b.relu(lora)))
    return b.module()


@pytest.mark.parametrize(
    ("fusion", "regions"),
    [(MarkElementwiseRegionsPass(), True), (FusionPipelinePass(target="cpu"), False)],
    ids=["regions", "pipeline"],
)
def test_elementwise_fusion_stops_at_the_moe_matmuls(fusion, regions):
    module = moe_graph()
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal((4, 3)).astype(np.float32), rng.standard_normal((2, 3, 5)).astype(np.float32),
              np.array([1, 0, 1, 1]), *(rng.standard_normal(s).astype(np.float32) for s in ((3, 5), (3, 1), (1, 5)))]
    before = run_function(module, "f", inputs)
    fusion.apply(Context(), module)
    module.verify()
    grouped = [op for op in module.walk() if isinstance(op, GroupedMatmulOp)]
    loras = [op for op in module.walk() if isinstance(op, LoraMatmulOp)]
    assert len(grouped) == 1 and len(loras) == 1
    assert not isinstance(grouped[0].parent_op(), ElementwiseRegionOp)
    assert not isinstance(loras[0].parent_op(), ElementwiseRegionOp)
    assert any(isinstance(op, ElementwiseRegionOp) for op in module.walk()) is regions
    np.testing.assert_allclose(run_function(module, "f", inputs)[0], before[0], rtol=1e-6)
