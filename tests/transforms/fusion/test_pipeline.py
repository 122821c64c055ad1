"""`rlx-fusion-pipeline`: RLX's per-target pass lists, and what `target=best` reaches."""

from collections import Counter

import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import inputs_for
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.tools.rlx_opt import RlxOptMain
from rlx_xdsl.transforms import FUSION_PASSES, get_all_passes
from rlx_xdsl.transforms.fusion.metrics import kernel_stats
from rlx_xdsl.transforms.fusion.metrics import kernels as kernel_ops
from rlx_xdsl.transforms.fusion.pipeline import (
    TARGETS,
    FusionPipelinePass,
    fusion_passes,
)

# RLX's `fusion_passes_for_supported` for the CPU target, written out from RLX 0.2.2's source.
RLX_CPU = [
    "LowerControlFlow", "lower_dot_general", "fuse_attention_block", "fuse_matmul_bias_act",
    "fuse_residual_ln", "fuse_residual_rms_norm", "fuse_rms_norm_reshape", "fuse_swiglu_dual_matmul",
    "fuse_shared_input_matmul", "fuse_swiglu", "mark_elementwise_regions", "unfuse_elementwise_regions",
    "dead_code_elimination",
]  # fmt: skip
OURS = {
    "LowerControlFlow": "rlx-lower-control-flow",
    "lower_dot_general": "rlx-lower-dot-general",
    "fuse_attention_block": "rlx-fuse-attention-block",
    "fuse_matmul_bias_act": "rlx-fuse-matmul-bias-act",
    "fuse_residual_ln": "rlx-fuse-residual-layer-norm",
    "fuse_residual_rms_norm": "rlx-fuse-residual-rms-norm",
    "fuse_rms_norm_reshape": "rlx-fuse-rms-norm-reshape",
    "fuse_swiglu_dual_matmul": "rlx-fuse-swiglu-dual-matmul",
    "fuse_shared_input_matmul": "rlx-fuse-shared-input-matmul",
    "fuse_swiglu": "rlx-fuse-swiglu",
    "mark_elementwise_regions": "rlx-mark-elementwise-regions",
    "unfuse_elementwise_regions": "rlx-unfuse-elementwise-regions",
    "dead_code_elimination": "rlx-dce",
}


def names(target: str, **options) -> list[str]:
    return [p.name for p in fusion_passes(target, **options)]


def test_cpu_list_is_rlx_s_13_passes_in_order():
    """RLX's `cpu_pipeline_includes_attention_block`: 13 passes, attention block first, DCE last.

    Ours also runs `rlx-dce` after the lowerings (docs/deviations.md: one run reaches the fixed point).
    """
    cpu = names("cpu")
    assert cpu[2] == "rlx-dce"
    rlx = cpu[:2] + cpu[3:]
    assert len(rlx) == 13
    assert rlx == [OURS[n] for n in RLX_CPU]
    assert rlx[2] == "rlx-fuse-attention-block" and rlx[-1] == "rlx-dce"


def test_skip_fusion_keeps_only_the_lowerings():
    """RLX's `metal_skip_fusion_only_lowers_dot`: 2 passes."""
    for target in TARGETS:
        assert names(target, skip_fusion=True) == ["rlx-lower-control-flow", "rlx-lower-dot-general"]


def test_target_claims_decide_the_fusions():
    metal, cuda, tpu = names("metal"), names("cuda"), names("tpu")
    assert "rlx-fuse-attention-block" not in metal  # metal_supported_ops_omit_attention_block_fusion
    assert "rlx-fuse-matmul-bias-act" in cuda  # cuda_supported_ops_fuse_matmul_bias_act
    assert "rlx-fuse-swiglu" not in cuda and "rlx-fuse-swiglu-dual-matmul" not in cuda
    assert names("rocm") == cuda
    assert tpu == [
        "rlx-lower-control-flow", "rlx-lower-dot-general", "rlx-dce", "rlx-fuse-matmul-bias-act",
        "rlx-fuse-residual-layer-norm", "rlx-fuse-rms-norm-reshape", "rlx-fuse-shared-input-matmul",
        "rlx-mark-elementwise-regions", "rlx-mark-batch-slice-regions", "rlx-mark-transform-regions",
        "rlx-fuse-region-prologue", "rlx-fuse-batch-preprocess", "rlx-decompose-fusion-regions",
        "rlx-dce", "rlx-clip-elementwise-regions",
    ]  # fmt: skip  (tpu claims no transform / batch region: RLX decomposes them)
    assert "rlx-decompose-fusion-regions" not in cuda  # GPU targets keep native FK regions (RLX's default)


def test_regions_are_unfused_on_cpu_and_kept_elsewhere():
    """RLX's `cpu_unfuses_elementwise_regions` and `metal_keeps_elementwise_regions_by_default`."""
    assert "rlx-unfuse-elementwise-regions" in names("cpu")
    assert "rlx-unfuse-elementwise-regions" not in names("metal")
    assert "rlx-clip-elementwise-regions" in names("metal")
    assert "rlx-unfuse-elementwise-regions" in names("metal", keep_regions=False)
    assert "rlx-unfuse-elementwise-regions" not in names("cpu", keep_regions=True)
    mark = next(p for p in fusion_passes("metal") if p.name == "rlx-mark-elementwise-regions")
    assert (mark.max_steps, mark.max_inputs) == (32, 16)


def test_best_adds_our_passes_to_the_cpu_list():
    best = names("best")
    assert best.index("rlx-constant-fold") < best.index("rlx-fuse-attention-block")
    assert best.index("rlx-fuse-swiglu") < best.index("rlx-fuse-matmul-epilogue") < best.index(
        "rlx-mark-elementwise-regions"
    )
    assert "rlx-unfuse-elementwise-regions" not in best


def test_every_pipeline_pass_is_a_registered_pass():
    registered = get_all_passes()
    for target in TARGETS:
        for pass_ in fusion_passes(target):
            assert registered[pass_.name]() is type(pass_)


def test_unknown_target_is_an_error():
    with pytest.raises(ValueError, match="unknown fusion target 'gpu' \\(expected one of: cpu, metal"):
        fusion_passes("gpu")
    with pytest.raises(ValueError, match="target=gpu: 'gpu' is not one of cpu, metal"):
        FusionPipelinePass(target="gpu")


def test_fusion_passes_are_listed_by_rlx_opt(capsys):
    RlxOptMain(args=["--list-passes"]).run()
    listed = capsys.readouterr().out
    for name in FUSION_PASSES:
        assert f"  {name}\n" in listed
    assert '--target=cpu|metal|cuda|rocm|tpu|wgpu|best (default: "cpu")' in listed


def swiglu_residual_rms_block():
    """The SwiGLU + residual + RMSNorm block: `rms_norm(x + W2(silu(W1 x + b1) * (W3 x)))`, x 8x64, hidden 128."""
    b = GraphBuilder("block")
    x = b.input("x", [8, 64])
    w1, b1, w3 = b.param("w1", [64, 128]), b.param("b1", [128]), b.param("w3", [64, 128])
    w2, g, beta = b.param("w2", [128, 64]), b.param("g", [64]), b.param("beta", [64])
    h = b.mul(b.silu(b.add(b.matmul(x, w1), b1)), b.matmul(x, w3))
    b.output(b.rms_norm(b.add(x, b.matmul(h, w2)), g, beta, eps=1e-6))
    return b.module()


@pytest.mark.parametrize(("target", "kernels"), [("cpu", 5), ("best", 4)])
def test_swiglu_block_kernel_counts(target, kernels):
    """RLX's CPU list leaves 5 kernels; `best` reaches IREE's 4 (3 matmuls and a reduction)."""
    module = swiglu_residual_rms_block()
    assert kernel_stats(module).kernels == 8
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    FusionPipelinePass(target=target).apply(Context(), module)
    module.verify()
    assert kernel_stats(module).kernels == kernels
    np.testing.assert_allclose(run_function(module, None, inputs)[0], before[0], rtol=1e-5, atol=1e-5)
    ops = Counter(op.name for op in module.ops.first.body.block.ops)
    assert ops["mir.fused_residual_rms_norm"] == 1 and ops["mir.fused_matmul_bias_act"] == 1


def residual_stream_block():
    """A pre-norm FFN block: the residual sum `h` feeds the norm and the output add."""
    b = GraphBuilder("block")
    x, r = b.input("x", [4, 16]), b.input("r", [4, 16])
    w1, w3, w2 = b.param("w1", [16, 32]), b.param("w3", [16, 32]), b.param("w2", [32, 16])
    g, beta = b.param("g", [16]), b.param("beta", [16])
    h = b.add(x, r)
    n = b.rms_norm(h, g, beta, eps=1e-6)
    b.output(b.add(h, b.matmul(b.mul(b.silu(b.matmul(n, w1)), b.matmul(n, w3)), w2)))
    return b.module()


@pytest.mark.parametrize(("target", "kernels"), [
    ("cpu", ["mir.fused_residual_rms_norm", "mir.matmul", "mir.fused_swiglu", "mir.matmul", "mir.add"]),
    ("best", ["mir.fused_residual_rms_norm", "mir.matmul", "mir.fused_swiglu", "mir.fused_matmul_epilogue"]),
])  # fmt: skip
def test_a_residual_sum_with_two_users_fuses_into_the_norm(target, kernels):
    """The sum the norm reads is also the output add's operand: the fused norm returns it, so
    `best` reaches 4 kernels (it left 5 when the shared add blocked the norm fusion)."""
    module = residual_stream_block()
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    FusionPipelinePass(target=target).apply(Context(), module)
    module.verify()
    assert [op.name for op in kernel_ops(module.ops.first)] == kernels
    assert len(module.ops.first.body.block.first_op.results) == 2
    np.testing.assert_allclose(run_function(module, None, inputs)[0], before[0], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(("target", "kernels"), [("cpu", 7), ("best", 6)])
def test_llama_layer_kernel_counts(target, kernels):
    """One LLaMA layer: rms_norm, the attention block, the residual norm keeping its sum, the
    gate/up matmul, fused_swiglu, the down matmul (and on cpu its residual add)."""
    module = build_llama(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32)
    FusionPipelinePass(target=target).apply(Context(), module)
    module.verify()
    assert kernel_stats(module).kernels == kernels
