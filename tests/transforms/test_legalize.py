"""`rlx-legalize`: unsupported ops are rewritten by the project's rules until only supported
ops remain (interpreter results unchanged), or the leftovers are reported at an op."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.mir import (
    ALL_OPS,
    attention,
    contraction,
    conv,
    elementwise,
    moe,
    norm,
    reduction,
    vision,
)
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
from rlx_xdsl.transforms.legalize import PRIMITIVE, LegalizePass

WITH_RULES = (
    norm.GroupNormOp, vision.ResizeNearest2xOp, vision.LayerNorm2dOp, vision.ConvTranspose2dOp,
    contraction.DotGeneralOp, reduction.SoftmaxOp, norm.LayerNormOp, norm.RmsNormOp,
    attention.AttentionOp, attention.RopeOp, conv.ConvOp, conv.PoolOp, moe.GroupedMatmulOp,
)  # fmt: skip
ALL_BUT_THESE = tuple(sorted({op.name for op in ALL_OPS} - {op.name for op in WITH_RULES}))


def mir_names(module) -> set[str]:
    return {op.name for op in module.walk() if op.name.startswith("mir.")}


def close(after, before):
    for a, b in zip(after, before, strict=True):
        np.testing.assert_allclose(np.asarray(a, np.float64), np.asarray(b, np.float64), rtol=2e-2, atol=2e-2)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=4, ops=[*WITH_RULES, elementwise.AddOp]))
def test_random_graphs_keep_their_values(module):
    inputs = inputs_for(module)
    before = run_function(module, "main", inputs)
    LegalizePass(supported=ALL_BUT_THESE).apply(make_context(), module)
    module.verify()
    assert not mir_names(module) & {op.name for op in WITH_RULES}
    close(run_function(module, "main", inputs), before)


def test_the_llama_graph_reaches_the_primitive_set():
    module = build_llama(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    assert not mir_names(module) <= PRIMITIVE
    LegalizePass(target="primitive").apply(make_context(), module)
    module.verify()
    assert mir_names(module) <= PRIMITIVE
    close(run_function(module, None, inputs), before)


@pytest.mark.parametrize(
    "props",
    [
        {"mask_kind": "sliding_window", "window": 2, "attn_logit_softcap": 5.0},
        {"mask_kind": "custom"},
        {"mask_kind": "bias", "score_scale": 0.3},
    ],
    ids=["window-softcap", "custom", "bias"],
)
def test_attention_variants_keep_their_values(props):
    """Grouped heads, a KV cache longer than the queries, and each mask kind."""
    b = GraphBuilder("f")
    q, k, v = b.input("q", [2, 4, 3, 8]), b.input("k", [2, 2, 5, 8]), b.input("v", [2, 2, 5, 8])
    mask = None
    if props["mask_kind"] == "custom":
        mask = b.input("m", [2, 5])
    elif props["mask_kind"] == "bias":
        mask = b.input("m", [2, 4, 3, 5])
    b.output(b.attention(q, k, v, mask, num_heads=4, head_dim=8, **props))
    module = b.module()
    inputs = random_inputs(find_function(module, None))
    if props["mask_kind"] == "custom":
        inputs[3] = np.array([[1, 0, 1, 1, 0], [0, 0, 0, 0, 0]], np.float32)  # a fully masked batch
    before = run_function(module, None, inputs)
    LegalizePass().apply(make_context(), module)
    assert mir_names(module) <= PRIMITIVE
    close(run_function(module, None, inputs), before)


def test_a_conv_net_reaches_the_primitive_set():
    """conv (strided, padded, dilated, grouped), layer_norm_2d, a resize and a transposed
    conv (whose decomposition flips the kernel with shape ops, not a gather)."""
    b = GraphBuilder("f")
    x, w1, g = b.input("x", [2, 4, 6, 5]), b.input("w1", [6, 2, 3, 2]), b.input("g", [6])
    wt = b.input("wt", [6, 2, 3, 2])
    y = b.conv(x, w1, kernel_size=[3, 2], stride=[2, 1], padding=[1, 1], dilation=[1, 2], groups=2)
    y = b.layer_norm_2d(y, g, g)
    y = b.conv_transpose_2d(y, wt, kernel_size=[3, 2], stride=[2, 1], padding=[1, 0], output_padding=[1, 0], groups=2)
    b.output(b.resize_nearest_2x(y))
    module = b.module()
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    LegalizePass().apply(make_context(), module)
    module.verify()
    assert mir_names(module) <= PRIMITIVE
    close(run_function(module, None, inputs), before)


@pytest.mark.parametrize("dtype", ["f32", "f16", "i32"])
def test_a_pooling_net_reaches_the_primitive_set(dtype):
    """Max and mean pooling with padding (padded cells never count) and overlapping,
    strided windows; f16 means accumulate in f32, integer max pads with the dtype's minimum."""
    b = GraphBuilder("f")
    x = b.input("x", [2, 3, 7, 6], dtype)
    y = b.pool(x, kind="max", kernel_size=[3, 2], stride=[2, 1], padding=[1, 1])
    outputs = [y, b.pool(x, kind="max", kernel_size=[2, 2])]
    if dtype != "i32":
        outputs.append(b.pool(y, kind="mean", kernel_size=[3, 3], stride=[2, 2], padding=[1, 1]))
    b.output(*outputs)
    module = b.module()
    inputs = random_inputs(find_function(module, None))
    if dtype == "i32":
        inputs[0] = -np.abs(inputs[0]) - 1  # all negative: padding by 0 would win
    before = run_function(module, None, inputs)
    LegalizePass().apply(make_context(), module)
    module.verify()
    assert mir_names(module) <= PRIMITIVE
    after = run_function(module, None, inputs)
    for a, e in zip(after, before, strict=True):
        assert a.dtype == e.dtype
        if dtype == "i32":
            np.testing.assert_array_equal(a, e)
        else:
            tol = 1e-3 if dtype == "f16" else 1e-6
            np.testing.assert_allclose(a.astype(np.float64), e.astype(np.float64), rtol=tol, atol=tol)


def test_a_fused_llama_graph_returns_to_unfused_ops():
    """The CPU fusion pipeline's fused kernels, for a target that has none of them."""
    module = build_llama(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    FusionPipelinePass(target="best").apply(Context(), module)
    fused = {name for name in mir_names(module) if name.startswith("mir.fused_") or name == "mir.elementwise_region"}
    assert fused
    supported = tuple(sorted({op.name for op in ALL_OPS} - fused))
    LegalizePass(supported=supported).apply(make_context(), module)
    module.verify()
    assert not mir_names(module) & fused
    close(run_function(module, None, inputs), before)


def test_the_primitive_target_takes_a_vision_block_to_primitives():
    b = GraphBuilder("f")
    x, g = b.input("x", [1, 4, 2, 2]), b.input("g", [4])
    b.output(b.softmax(b.resize_nearest_2x(b.layer_norm_2d(x, g, g)), axis=1))
    module = b.module()
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    LegalizePass().apply(make_context(), module)
    assert mir_names(module) <= PRIMITIVE
    close(run_function(module, None, inputs), before)


def test_the_primitive_target_reports_what_no_rule_removes():
    b = GraphBuilder("f")
    x = b.input("x", [1, 2, 4, 4])
    b.output(b.resize_nearest_2x(b.cumsum(x, axis=3)))
    module = b.module()
    with pytest.raises(OpError, match=r"'mir.cumsum' is not supported by the target .* after 1 round\(s\): mir.cumsum$"):
        LegalizePass().apply(make_context(), module)
    assert "mir.resize_nearest_2x" not in mir_names(module)


# --- the fusion targets' kernels --------------------------------------------------------------


def test_each_target_declares_its_kernels_with_its_fusion_claims():
    """Fused ops follow the fusion claims; regions only where kept; GPUs lack backward kernels."""
    from rlx_xdsl.dialects.mir import backward, fused, fused_regions
    from rlx_xdsl.transforms.fusion.pipeline import TARGETS as FUSION
    from rlx_xdsl.transforms.legalize import TARGETS

    assert set(FUSION) < set(TARGETS)
    assert fused.FusedSwigluOp.name in TARGETS["cpu"] and fused.FusedSwigluOp.name not in TARGETS["cuda"]
    assert fused.FusedAttentionBlockOp.name not in TARGETS["metal"]
    region = fused_regions.ElementwiseRegionOp.name
    assert region not in TARGETS["cpu"] and region in TARGETS["cuda"] and region in TARGETS["tpu"]
    assert backward.ConvBackwardInputOp.name in TARGETS["cpu"] and backward.ConvBackwardInputOp.name not in TARGETS["wgpu"]
    assert TARGETS["tpu"] - PRIMITIVE == {
        fused.FusedMatmulBiasActOp.name, fused.FusedResidualLayerNormOp.name, region
    }
    for name in FUSION:
        assert "mir.if" not in TARGETS[name] and PRIMITIVE <= TARGETS[name]


@pytest.mark.parametrize("target", ["cpu", "cuda", "metal", "tpu"])
def test_a_fused_llama_graph_legalizes_for_its_target(target):
    """The target's fusion pipeline, then rlx-legalize for the same target: every op is one of
    the target's kernels and the values are unchanged."""
    from rlx_xdsl.transforms.legalize import TARGETS

    module = build_llama(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    FusionPipelinePass(target=target).apply(Context(), module)
    LegalizePass(target=target).apply(make_context(), module)
    module.verify()
    assert mir_names(module) - {"mir.yield"} <= TARGETS[target]
    close(run_function(module, None, inputs), before)


def test_the_training_graph_legalizes_for_a_gpu_target():
    """cuda has no backward kernels: the decompositions replace them."""
    from rlx_xdsl.dialects.mir import backward
    from rlx_xdsl.testing.training import build_llama_training
    from rlx_xdsl.transforms.legalize import TARGETS

    module = build_llama_training(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32, vocab=8)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    assert mir_names(module) & {op.name for op in backward.OPS}
    LegalizePass(target="cuda").apply(make_context(), module)
    assert mir_names(module) <= TARGETS["cuda"]
    assert not mir_names(module) & ({op.name for op in backward.OPS} - {backward.StopGradientOp.name})
    close(run_function(module, None, inputs), before)


def test_unknown_targets_are_refused():
    with pytest.raises(ValueError, match="target=gpu: 'gpu' is not one of primitive, cpu, metal"):
        LegalizePass(target="gpu")


def test_unknown_dispatch_policies_are_refused():
    with pytest.raises(ValueError, match="dispatch=fast: 'fast' is not one of native, common"):
        LegalizePass(dispatch="fast")


def test_unknown_supported_names_are_refused():
    with pytest.raises(ValueError, match="supported=mir.nope: no such op"):
        LegalizePass(supported=("mir.nope",))


# --- the dispatch report -------------------------------------------------------------------


def vision_graph():
    b = GraphBuilder("f")
    x, g = b.input("x", [1, 4, 2, 2]), b.input("g", [4])
    y = b.layer_norm_2d(x, g, g)
    b.output(b.add(b.resize_nearest_2x(y), b.constant(1.0)), b.dot_general(x, x, lhs_contracting=[1], rhs_contracting=[1]))
    return b.module()


def test_dispatch_report_paths_and_readiness():
    from rlx_xdsl.transforms.dispatch_report import DispatchReport

    module = vision_graph()
    text = str(module)
    ready = DispatchReport.analyze(module, PRIMITIVE)
    paths = {kind: (count, path) for kind, count, path in ready.rows}
    assert paths["mir.add"] == (1, "native")
    assert paths["mir.layer_norm_2d"] == (1, "common IR")
    assert paths["mir.resize_nearest_2x"] == (1, "common IR")
    assert paths["mir.dot_general"] == (1, "rewritten")
    assert ready.compile_ready and ready.to_json()["compile_ready"] is True
    stuck = DispatchReport.analyze(module, PRIMITIVE - {"mir.sqrt"})
    assert ("mir.sqrt", 0, "unsupported") in stuck.rows and not stuck.compile_ready
    assert "compile-ready: no" in stuck.render()
    assert str(module) == text  # the analysis legalized a copy


def test_the_training_graph_keeps_its_values_without_backward_and_loss_kernels():
    """The LLaMA training workload on a backend with no backward or loss kernels (and no
    rms_norm or softmax): decompositions, the SCE lowering and the primitive rules remove them."""
    from rlx_xdsl.dialects.mir import backward, loss
    from rlx_xdsl.testing.training import build_llama_training

    module = build_llama_training(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32, vocab=8)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    removed = {op.name for op in (*backward.OPS, *loss.OPS, norm.RmsNormOp, reduction.SoftmaxOp)}
    assert mir_names(module) & removed
    LegalizePass(supported=tuple(sorted({op.name for op in ALL_OPS} - removed))).apply(make_context(), module)
    module.verify()
    assert not mir_names(module) & removed
    close(run_function(module, None, inputs), before)


def test_the_training_graph_reaches_the_primitive_set():
    """Forward, loss and backward kernels all become matmul, elementwise, reduce and shape ops."""
    from rlx_xdsl.testing.training import build_llama_training

    module = build_llama_training(1, batch=1, seq=4, dim=16, n_heads=2, n_kv_heads=1, ffn=32, vocab=8)
    inputs = random_inputs(find_function(module, None))
    before = run_function(module, None, inputs)
    assert not mir_names(module) <= PRIMITIVE
    LegalizePass(target="primitive").apply(make_context(), module)
    module.verify()
    assert mir_names(module) <= PRIMITIVE
    close(run_function(module, None, inputs), before)


def test_grouped_matmul_becomes_gather_and_matmul_for_a_target_without_it():
    """Dynamic M: the expansion's reshapes infer it."""
    b = GraphBuilder("f")
    x, w, e = b.input("x", [DYNAMIC, 3]), b.input("w", [2, 3, 4]), b.input("e", [DYNAMIC], "i64")
    b.output(b.grouped_matmul(x, w, e))
    module = b.module()
    inputs = [np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32),
              np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32), np.array([1, 0, 0, 1, 1])]
    before = run_function(module, None, inputs)
    LegalizePass(supported=(*PRIMITIVE, "mir.gather")).apply(make_context(), module)
    module.verify()
    assert "mir.grouped_matmul" not in mir_names(module) and "mir.gather" in mir_names(module)
    np.testing.assert_allclose(run_function(module, None, inputs)[0], before[0], rtol=1e-6, atol=1e-6)
