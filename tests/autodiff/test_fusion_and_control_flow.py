"""Autodiff of what the fusion work adds: every fused op and fused region (through the
`unfuse` step of `rlx-prepare-ad`), `mir.if`/`mir.while` (inline-if, unroll-while),
`mir.dot_general` without a rule (lower-dot-general), and the fusion pipeline's LLaMA graph."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl import layers
from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad, step_rewriting
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import fused, fused_regions, moe
from rlx_xdsl.dialects.mir.contraction import DotGeneralOp, MatmulOp
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import (
    check_directional,
    check_gradients,
    module_function,
)
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.testing.widen import widen_to_f64
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

RNG = np.random.default_rng(23)
F64 = "f64"


def prepared(module):
    prepare_for_ad(module, after_step=lambda step: verify_located(module))
    return module


def float_inputs(module, name="f"):
    """Random inputs for `@name`; `mask`-named arguments get 0/1 keep masks (first key kept)."""
    inputs = []
    for arg in graph_args(find_function(module, name)):
        shape = arg.type.get_shape()
        if arg.name == "mask":
            keep = (RNG.random(shape) > 0.4).astype(np.float64)
            keep[..., 0] = 1.0
            inputs.append(keep)
        else:
            inputs.append(RNG.standard_normal(shape) * 0.5)
    return inputs


def params(module, name="f"):
    return [a.index for a in graph_args(find_function(module, name)) if a.is_param]


def squared_sum(b, out):
    axes = list(range(len(out.type.get_shape())))
    return b.reduce(b.mul(out, out), kind="sum", axes=axes)


# One graph per fused op ------------------------------------------------------------------------


def residual_layer_norm(b):
    x, r = b.param("x", [3, 4], F64), b.param("r", [3, 4], F64)
    bias, g, beta = (b.param(n, [4], F64) for n in ("bias", "g", "beta"))
    return b.fused_residual_layer_norm(x, r, g, beta, bias, eps=1e-3)


def attention_block_causal_gqa_rope(b):
    """Grouped-query (2 heads, 1 KV head), qkv bias, rope on every dim, causal."""
    h = b.param("h", [1, 3, 8], F64)
    wqkv, wo = b.param("wqkv", [8, 16], F64), b.param("wo", [8, 8], F64)
    cos, sin = b.input("cos", [3, 2], F64), b.input("sin", [3, 2], F64)
    return b.fused_attention_block(
        h, wqkv, wo, qkv_bias=b.param("bq", [16], F64), cos=cos, sin=sin,
        num_heads=2, head_dim=4, num_kv_heads=1, mask_kind="causal",
    )  # fmt: skip


def attention_block_custom_mask_softcap(b):
    """A custom key mask, score_scale, softcap, out bias, partial rope (n_rot = 2)."""
    h = b.param("h", [2, 3, 8], F64)
    wqkv, wo = b.param("wqkv", [8, 24], F64), b.param("wo", [8, 6], F64)
    mask = b.input("mask", [2, 3], F64)
    cos, sin = b.input("cos", [3, 1], F64), b.input("sin", [3, 1], F64)
    return b.fused_attention_block(
        h, wqkv, wo, mask=mask, qkv_bias=b.param("bq", [24], F64), out_bias=b.param("bo", [6], F64),
        cos=cos, sin=sin, num_heads=2, head_dim=4, num_kv_heads=2, mask_kind="custom",
        score_scale=0.3, attn_logit_softcap=2.0, n_rot=2,
    )  # fmt: skip


def transformer_layer(b):
    h = b.param("h", [1, 3, 8], F64)
    shapes = {"wqkv": [8, 24], "wo": [8, 8], "up": [8, 12], "down": [12, 8]}
    weights = {n: b.param(n, s, F64) for n, s in shapes.items()}
    g1, b1, g2, b2 = (b.param(n, [8], F64) for n in ("g1", "b1", "g2", "b2"))
    return b.fused_transformer_layer(
        h, weights["wqkv"], weights["wo"], g1, b1, weights["up"], weights["down"], g2, b2,
        qkv_bias=b.param("bqkv", [24], F64), up_bias=b.param("bup", [12], F64),
        num_heads=2, head_dim=4, mask_kind="causal", activation="gelu", eps1=1e-3, eps2=1e-3,
    )  # fmt: skip


def elementwise_region(b):
    x, y, z = b.param("x", [3, 4], F64), b.param("y", [3, 1], F64), b.param("z", [4], F64)
    return b.elementwise_region(
        [x, y, z], lambda rb, x, y, z: rb.add(rb.tanh(rb.mul(x, y)), rb.mul(rb.sigmoid(z), x))
    )


def elementwise_region_prologue(b):
    """Input `u` read upsampled 2x (RLX's region prologue): its gradient sums each 2x2 block."""
    a, u = b.param("a", [1, 2, 4, 6], F64), b.param("u", [1, 2, 2, 3], F64)
    return b.elementwise_region(
        [a, u], lambda rb, a, u: rb.mul(rb.tanh(a), rb.add(u, a)), prologue=("resize_nearest_2x", 1)
    )


def transform_region(b):
    x = b.param("x", [1, 2, 2, 3], F64)
    y = b.transform_region(x, ["resize_nearest_2x", "resize_nearest_2x"])
    return b.mul(b.tanh(y), y)


def batch_elementwise_region(b):
    """Three slices, a per-channel shift and a scalar scale shared by every slice."""
    slices = [b.param(f"s{i}", [2, 3], F64) for i in range(3)]
    m, k = b.param("m", [1, 3], F64), b.param("k", [], F64)
    return b.batch_elementwise_region(slices, [m, k], lambda rb, v, m, k: rb.tanh(rb.mul(rb.sub(v, m), k)))


def matmul_epilogue(b):
    x, w = b.param("x", [2, 3, 4], F64), b.param("w", [4, 5], F64)
    bias, r = b.param("bias", [5], F64), b.param("r", [2, 3, 5], F64)
    return b.matmul_epilogue(x, w, [bias, r], lambda rb, acc, bias, r: rb.mul(rb.gelu(rb.add(acc, bias)), r))


def matmul_bias_act(b):
    x, w, bias = b.param("x", [3, 4], F64), b.param("w", [4, 5], F64), b.param("bias", [5], F64)
    return b.fused_matmul_bias_act(x, w, bias, activation="silu")


def lora_matmul(b):
    """dx, dw, da and db: every operand of the adapter layer is a parameter."""
    x, w = b.param("x", [2, 3, 4], F64), b.param("w", [4, 5], F64)
    a, up = b.param("a", [4, 2], F64), b.param("b", [2, 5], F64)
    return b.lora_matmul(x, w, a, up, scale=0.5)


def swiglu(b):
    return b.fused_swiglu(b.param("x", [3, 6], F64))


def residual_rms_norm(b):
    x, r, g, beta = (b.param(n, s, F64) for n, s in (("x", [3, 4]), ("r", [3, 4]), ("g", [4]), ("beta", [4])))
    return b.fused_residual_rms_norm(x, r, g, beta, eps=1e-3)


def residual_norm_keeping_the_sum(norm: str):
    """Both results feed the loss: the sum's cotangent joins the one coming through the norm."""

    def build(b):
        x, r, c = b.param("x", [3, 4], F64), b.param("r", [3, 4], F64), b.param("c", [4], F64)
        g, beta = b.param("g", [4], F64), b.param("beta", [4], F64)
        normed, total = getattr(b, f"fused_residual_{norm}")(x, r, g, beta, c, eps=1e-3, keep_sum=True)
        return b.add(normed, b.mul(total, b.tanh(total)))

    return build


FUSED_GRAPHS = {
    "residual_rms_norm_keeping_the_sum": (fused.FusedResidualRmsNormOp, residual_norm_keeping_the_sum("rms_norm")),
    "residual_layer_norm_keeping_the_sum": (
        fused.FusedResidualLayerNormOp, residual_norm_keeping_the_sum("layer_norm"),
    ),
    "residual_layer_norm": (fused.FusedResidualLayerNormOp, residual_layer_norm),
    "attention_block_causal_gqa_rope": (fused.FusedAttentionBlockOp, attention_block_causal_gqa_rope),
    "attention_block_custom_mask_softcap": (fused.FusedAttentionBlockOp, attention_block_custom_mask_softcap),
    "transformer_layer": (fused.FusedTransformerLayerOp, transformer_layer),
    "elementwise_region": (fused_regions.ElementwiseRegionOp, elementwise_region),
    "matmul_epilogue": (fused_regions.FusedMatmulEpilogueOp, matmul_epilogue),
    "elementwise_region_prologue": (fused_regions.ElementwiseRegionOp, elementwise_region_prologue),
    "transform_region": (fused_regions.TransformRegionOp, transform_region),
    "batch_elementwise_region": (fused_regions.BatchElementwiseRegionOp, batch_elementwise_region),
    "matmul_bias_act": (fused.FusedMatmulBiasActOp, matmul_bias_act),
    "swiglu": (fused.FusedSwigluOp, swiglu),
    "lora_matmul": (moe.LoraMatmulOp, lora_matmul),
    "residual_rms_norm": (fused.FusedResidualRmsNormOp, residual_rms_norm),
}


def test_every_fused_op_has_a_gradient_test_here():
    tested = {op_class for op_class, _ in FUSED_GRAPHS.values()}
    assert {*fused.OPS, *fused_regions.OPS, moe.LoraMatmulOp} <= tested


def test_fused_ops_are_unfused_by_prepare_ad_not_differentiated_whole():
    layers.load("vjp")
    for op_class in (*fused.OPS, *fused_regions.OPS, moe.LoraMatmulOp):
        assert op_class not in VJP_RULES and step_rewriting(op_class) == "unfuse", op_class.name


@pytest.mark.parametrize("case", sorted(FUSED_GRAPHS))
def test_a_graph_through_each_fused_op_matches_central_differences(case):
    op_class, build = FUSED_GRAPHS[case]
    b = GraphBuilder("f")
    b.output(squared_sum(b, build(b)))
    module = b.module()
    assert [op for op in module.walk() if isinstance(op, op_class)]
    inputs = float_inputs(module)
    expected = run_function(module, "f", inputs)
    prepared(module)
    assert not [op for op in module.walk() if op.name.startswith("mir.fused") or isinstance(op, op_class)]
    np.testing.assert_allclose(run_function(module, "f", inputs)[0], expected[0], rtol=1e-10)
    check_gradients(module, "f", inputs, params(module))


# The fusion pipeline's LLaMA graph ----------------------------------------------------------------


@pytest.mark.parametrize("target", ["cpu", "best"])
def test_the_fused_llama_graph_differentiates_and_passes_a_directional_check(target):
    """rlx-fusion-pipeline, then rlx-prepare-ad + rlx-grad w.r.t. every weight, in f64:
    `<grad, d>` equals the central difference of the loss along random directions `d`."""
    dims = {"batch": 1, "seq": 3, "dim": 8, "n_heads": 2, "n_kv_heads": 1, "ffn": 12}
    module = build_llama(2, **dims)
    FusionPipelinePass(target=target).apply(Context(), module)
    assert {"mir.fused_attention_block", "mir.fused_swiglu"} <= {op.name for op in module.walk()}
    assert [op for op in module.walk() if isinstance(op, fused.FusedResidualRmsNormOp) and op.keeps_sum]
    widen_to_f64(module)
    module.verify()
    function = find_function(module, "llama")
    cos, sin = rope_tables(dims["seq"], dims["dim"] // dims["n_heads"])
    inputs = [RNG.standard_normal((1, 3, 8)), cos.astype(np.float64), sin.astype(np.float64)]
    for arg in graph_args(function)[3:]:
        shape = arg.type.get_shape()
        noise = RNG.standard_normal(shape)
        inputs.append(1.0 + 0.1 * noise if "gamma" in arg.name else 0.3 * noise)
    forward = module_function(module, "llama")
    wrt = params(module, "llama")
    assert len(wrt) >= 10
    prepared(module)
    fused_names = [op.name for op in module.walk() if op.name.startswith(("mir.fused", "mir.elementwise_region"))]
    assert not fused_names
    build_gradient(module, "llama")
    module.verify()
    cotangent = RNG.standard_normal((1, 3, 8))
    _, *gradients = run_function(module, "llama_grad", [*inputs, cotangent])
    assert len(gradients) == len(wrt)
    for index, gradient in zip(wrt, gradients, strict=True):
        directions = [RNG.standard_normal(np.shape(gradient)) for _ in range(2)]
        check_directional(gradient, forward, inputs, index, cotangent, directions, rtol=1e-5, atol=1e-7)


# Control flow and dot_general -------------------------------------------------------------------


def if_and_while(max_iterations=3):
    """`if sum(x) > 0 then tanh(x * w) * w else x - w`, then `h <- sin(h) * w + h` while the
    counter `i < 2`: the third unrolled iteration is frozen (its `where` keeps the old values)."""
    b = GraphBuilder("f")
    x, w = b.param("x", [4], F64), b.param("w", [4], F64)
    positive = b.compare(b.reduce(x, kind="sum", axes=[0], keep_dim=True), b.constant(np.zeros(1), F64), "gt")
    h = b.if_(
        positive, [x, w], lambda rb, x, w: rb.mul(rb.tanh(rb.mul(x, w)), w), lambda rb, x, w: rb.sub(x, w)
    )
    one, two = np.ones(1), np.full(1, 2.0)
    h, _, _ = b.while_(
        [h, w, b.constant(np.zeros(1), F64)],
        lambda rb, h, w, i: rb.compare(i, rb.constant(two, F64), "lt"),
        lambda rb, h, w, i: (rb.add(rb.mul(rb.sin(h), w), h), w, rb.add(i, rb.constant(one, F64))),
        max_iterations=max_iterations,
    )
    b.output(squared_sum(b, h))
    return b.module()


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_a_graph_through_if_and_while_matches_central_differences(sign):
    module = if_and_while()
    x = sign * (np.abs(RNG.standard_normal(4)) + 0.1)
    inputs = [x, RNG.standard_normal(4)]
    expected = run_function(module, "f", inputs)
    prepared(module)
    assert not [op for op in module.walk() if isinstance(op, IfOp | WhileOp)]
    np.testing.assert_allclose(run_function(module, "f", inputs)[0], expected[0], rtol=1e-12)
    check_gradients(module, "f", inputs, [0, 1])


def test_an_unbounded_while_is_a_located_error_naming_the_loop():
    module = if_and_while(max_iterations=None)
    message = r"^'mir.while' without max_iterations cannot be unrolled for autodiff"
    with pytest.raises(OpError, match=message) as e:
        prepare_for_ad(module)
    assert isinstance(e.value.op, WhileOp)


@pytest.fixture
def dot_general_without_rule():
    layers.load("vjp")
    rule = VJP_RULES[DotGeneralOp]
    VJP_RULES.remove(DotGeneralOp)
    yield
    VJP_RULES.add(DotGeneralOp, rule)


def dot_general_graph():
    b = GraphBuilder("f")
    a, c = b.param("a", [2, 3, 4], F64), b.param("c", [2, 4, 5], F64)
    out = b.dot_general(a, c, lhs_contracting=[2], rhs_contracting=[1], lhs_batch=[0], rhs_batch=[0])
    b.output(squared_sum(b, out))
    return b.module()


def test_dot_general_keeps_its_own_rule():
    module = prepared(dot_general_graph())
    assert [op for op in module.walk() if isinstance(op, DotGeneralOp)]


def test_a_dot_general_without_a_rule_is_lowered_to_matmul_and_differentiated(dot_general_without_rule):
    module = prepared(dot_general_graph())
    names = [op for op in module.walk() if isinstance(op, DotGeneralOp | MatmulOp)]
    assert names and all(isinstance(op, MatmulOp) for op in names)
    check_gradients(module, "f", [RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))], [0, 1])
