"""`rlx-lower-hir`: both policies compute what the blocks mean, emit what RLX emits, and
record where every MIR op came from."""

from collections import Counter
from io import StringIO
from typing import ClassVar

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, NameLoc, StringAttr, TensorType
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.pattern_rewriter import PatternRewriteWalker
from xdsl.printer import Printer
from xdsl.traits import Pure
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.conversions.hir_to_mir import LOWERINGS, Policy
from rlx_xdsl.conversions.hir_to_mir.lower import LowerBlockOp, LowerHirPass
from rlx_xdsl.dialects import hir
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.hir.base import HirOperation
from rlx_xdsl.dialects.mir import fused
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.conv import ConvOp
from rlx_xdsl.dialects.mir.elementwise import SiluOp
from rlx_xdsl.dialects.mir.shape import ConcatOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.transforms.specialize import SpecializeShapesPass

RNG = np.random.default_rng(21)
FUSED_OPS = tuple(fused.OPS)


def lowered(module: ModuleOp, policy: str) -> ModuleOp:
    """A lowered, verified copy of `module`."""
    copy = module.clone()
    LowerHirPass(policy=policy).apply(Context(), copy)
    copy.verify()
    return copy


def ops_of(module: ModuleOp) -> list:
    return [op for op in find_function(module).body.block.ops if op.name != "func.return"]


def histogram(module: ModuleOp) -> Counter:
    return Counter(op.name for op in ops_of(module))


# One graph per block op ----------------------------------------------------------------


def block_graph(op_name: str, shapes: list, **properties) -> ModuleOp:
    """`f(args) = hir.<op_name>(args, **properties)`; a None shape omits an optional operand."""
    b = GraphBuilder("f")
    args = [None if s is None else b.input(f"a{i}", s) for i, s in enumerate(shapes)]
    result = getattr(b.hir, op_name)(*args, **properties)
    b.output(*(result if isinstance(result, tuple) else (result,)))
    return b.module()


LLAMA_SHAPES = [[2, 5, 8], [8], [8], [8, 8], [8, 4], [8, 4], [8, 8], [8], [8], [8, 6], [8, 6], [6, 8], [5, 2], [5, 2]]
CASES = {
    "linear": ("linear", [[2, 3, 4], [4, 5]], {}),
    "linear_bias_gelu": ("linear", [[2, 3, 4], [4, 5], [5]], {"activation": "gelu"}),
    "linear_bias_exp": ("linear", [[3, 4], [4, 5], [1, 5]], {"activation": "exp"}),
    "linear_fused": ("linear_fused", [[3, 4], [4, 5], [5]], {}),
    "linear_fused_silu": ("linear_fused", [[3, 4], [4, 5], [5]], {"activation": "silu"}),
    "shared_linear_pair": ("shared_linear_pair", [[3, 4], [4, 5], [4, 2]], {}),
    "swiglu": ("swiglu", [[2, 3, 8], [8, 6], [8, 6], [6, 4]], {}),
    "rms_norm": ("rms_norm", [[2, 3, 8], [8], [8]], {"eps": 1e-5}),
    "residual_rms_norm": ("residual_rms_norm", [[2, 3, 8], [2, 3, 8], [8], [8]], {"eps": 1e-5}),
    "attention": ("attention", [[1, 4, 3, 8], [1, 2, 5, 8], [1, 2, 5, 8]], {"num_heads": 4, "head_dim": 8, "mask_kind": "causal"}),
    "attention_bias": ("attention", [[1, 4, 3, 8], [1, 4, 5, 8], [1, 4, 5, 8], [3, 5]], {"num_heads": 4, "head_dim": 8, "mask_kind": "bias"}),
    "rope": ("rope", [[2, 3, 5, 8], [5, 2], [5, 2]], {"head_dim": 8, "n_rot": 4}),
    "depthwise_conv1d_causal": ("depthwise_conv1d_causal", [[2, 6, 3], [3, 1, 1, 3], [2, 2, 3]], {"kernel_size": 3}),
    "llama_decoder_block": ("llama_decoder_block", LLAMA_SHAPES, {"num_heads": 2, "head_dim": 4, "num_kv_heads": 1}),
    "moe_swiglu": ("moe_swiglu", [[2, 3, 4], [4, 3], [3, 4, 5], [3, 4, 5], [3, 5, 4]], {"num_experts": 3, "top_k": 2}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(CASES))
def test_direct_and_fusable_compute_the_block(case):
    op_name, shapes, properties = CASES[case]
    module = block_graph(op_name, shapes, **properties)
    inputs = random_inputs(find_function(module), seed=3)
    expected = run_function(module, "f", inputs)  # the HIR op on the interpreter
    for policy in Policy:
        got = run_function(lowered(module, policy), "f", inputs)
        for want, have in zip(expected, got, strict=True):
            np.testing.assert_allclose(have, want, rtol=1e-5, atol=1e-5, err_msg=f"{case} under {policy}")


@pytest.mark.parametrize("case", [c for c in CASES if CASES[c][0] != "linear_fused"])
def test_fusable_emits_only_primitive_mir(case):
    """Everything but `hir.linear_fused` (fused under both policies, as RLX's `LinearFused`)."""
    op_name, shapes, properties = CASES[case]
    module = lowered(block_graph(op_name, shapes, **properties), "fusable")
    assert all(op.name.startswith("mir.") and not isinstance(op, FUSED_OPS) for op in ops_of(module))


# What each policy emits (RLX's lowering table) -------------------------------------------

DIRECT_FUSED = {
    "linear": Counter({"mir.matmul": 1}),
    "linear_bias_gelu": Counter({"mir.fused_matmul_bias_act": 1}),
    "linear_bias_exp": Counter({"mir.fused_matmul_bias_act": 1}),
    "linear_fused": Counter({"mir.fused_matmul_bias_act": 1}),
    "swiglu": Counter({"mir.concat": 1, "mir.matmul": 2, "mir.fused_swiglu": 1}),
    "residual_rms_norm": Counter({"mir.fused_residual_rms_norm": 1}),
    "moe_swiglu": Counter({"mir.reshape": 4, "mir.matmul": 1, "mir.softmax": 1, "mir.topk": 1, "mir.reduce": 1, "mir.div": 1, "mir.narrow": 4, "mir.add": 1, "mir.concat": 1, "mir.grouped_matmul": 4, "mir.fused_swiglu": 2, "mir.mul": 2}),
}
FUSABLE_CHAINS = {
    "linear": Counter({"mir.matmul": 1}),
    "linear_bias_gelu": Counter({"mir.matmul": 1, "mir.add": 1, "mir.gelu": 1}),
    "linear_bias_exp": Counter({"mir.matmul": 1, "mir.add": 1, "mir.exp": 1}),
    "linear_fused": Counter({"mir.fused_matmul_bias_act": 1}),
    "swiglu": Counter({"mir.matmul": 3, "mir.silu": 1, "mir.mul": 1}),
    "residual_rms_norm": Counter({"mir.add": 1, "mir.rms_norm": 1}),
    "moe_swiglu": Counter({"mir.reshape": 4, "mir.matmul": 1, "mir.softmax": 1, "mir.topk": 1, "mir.reduce": 1, "mir.div": 1, "mir.narrow": 4, "mir.add": 1, "mir.grouped_matmul": 6, "mir.silu": 2, "mir.mul": 4}),
}


@pytest.mark.parametrize("case", list(DIRECT_FUSED))
def test_each_policy_emits_rlx_ops(case):
    op_name, shapes, properties = CASES[case]
    module = block_graph(op_name, shapes, **properties)
    assert histogram(lowered(module, "direct")) == DIRECT_FUSED[case]
    if case != "linear_fused":  # always fused, as RLX's LinearFused
        assert histogram(lowered(module, "fusable")) == FUSABLE_CHAINS[case]


def test_direct_keeps_the_activation_of_a_linear_layer():
    module = lowered(block_graph(*CASES["linear_bias_exp"][:2], activation="exp"), "direct")
    (op,) = ops_of(module)
    assert isinstance(op, fused.FusedMatmulBiasActOp) and op.kind == "exp"


def test_fusable_swiglu_has_nine_nodes():
    """RLX's `hir_swiglu_lowers_to_fusable_mir`: 4 graph inputs and 5 ops (3 matmuls, silu, mul)."""
    module = lowered(block_graph("swiglu", [[4, 768], [768, 2048], [768, 2048], [2048, 768]]), "fusable")
    function = find_function(module)
    assert len(function.body.block.args) + len(ops_of(module)) == 9
    assert any(isinstance(op, MatmulOp) for op in ops_of(module))
    silu = next(op for op in ops_of(module) if isinstance(op, SiluOp))
    gate_matmul = silu.input.owner
    assert gate_matmul.rhs is function.body.block.args[2]  # silu reads x @ gate_w


def test_direct_swiglu_emits_the_fused_op_on_concatenated_weights():
    """RLX's `direct_hir_swiglu_emits_fused_op`: up is the low half of the concatenation."""
    module = lowered(block_graph("swiglu", [[4, 16], [16, 8], [16, 8], [8, 16]]), "direct")
    (concat,) = [op for op in ops_of(module) if isinstance(op, ConcatOp)]
    up, gate = find_function(module).body.block.args[1:3]
    assert list(concat.inputs) == [up, gate] and concat.axis.value.data == 1
    (swiglu,) = [op for op in ops_of(module) if isinstance(op, fused.FusedSwigluOp)]
    assert not swiglu.is_gate_first and swiglu.cast_to is None


def test_depthwise_conv_lowers_to_a_grouped_conv_and_a_concat():
    """RLX's `hir_depthwise_conv1d_causal_lowers_to_grouped_conv`, under both policies."""
    module = block_graph("depthwise_conv1d_causal", [[2, 8, 16], [16, 1, 1, 3], [2, 2, 16]], kernel_size=3)
    for policy in Policy:
        ops = ops_of(lowered(module, policy))
        (conv,) = [op for op in ops if isinstance(op, ConvOp)]
        assert conv.groups.value.data == 16 and list(conv.kernel_size.get_values()) == [1, 3]
        assert any(isinstance(op, ConcatOp) for op in ops)


def test_rope_and_rms_norm_lower_to_their_mir_ops():
    """RLX's `hir_gdn_dequant_rope_rms_lowers` (the RoPE and RMSNorm half: no GDN/dequant here)."""
    b = GraphBuilder("f")
    x = b.input("x", [1, 4, 8])
    rotated = b.hir.rope(x, b.param("cos", [4, 4]), b.param("sin", [4, 4]), head_dim=8, n_rot=8)
    b.output(b.hir.rms_norm(rotated, b.param("gamma", [8]), b.param("beta", [8]), eps=1e-6))
    assert histogram(lowered(b.module(), "direct")) == Counter({"mir.rope": 1, "mir.rms_norm": 1})


def test_block_ops_expand_the_same_way_under_both_policies():
    same = ("llama_decoder_block", "depthwise_conv1d_causal", "attention", "rope", "rms_norm", "shared_linear_pair")
    for case in same:
        op_name, shapes, properties = CASES[case]
        module = block_graph(op_name, shapes, **properties)
        assert str(lowered(module, "direct")) == str(lowered(module, "fusable")), case


def test_mir_ops_beside_blocks_are_left_alone():
    """MIR ops in an HIR function (RLX's `HirOp::Mir` escape hatch) pass through unchanged."""
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    h = b.tanh(x)
    b.output(b.sigmoid(b.hir.linear(h, b.param("w", [4, 4]))))
    module = lowered(b.module(), "direct")
    assert [op.name for op in ops_of(module)] == ["mir.tanh", "mir.matmul", "mir.sigmoid"]


def test_blocks_inside_regions_are_lowered():
    b = GraphBuilder("f")
    x, w, p = b.input("x", [2, 4]), b.param("w", [4, 4]), b.input("p", [], "i1")
    out = b.if_(p, [x, w], lambda rb, x, w: rb.hir.linear(x, w, activation="relu"), lambda rb, x, w: x)
    b.output(out)
    module = b.module()
    data = [RNG.standard_normal((2, 4)).astype(np.float32), RNG.standard_normal((4, 4)).astype(np.float32)]
    for policy in Policy:
        low = lowered(module, policy)
        assert not any(isinstance(op, HirOperation) for op in low.walk())
        for pred in (True, False):
            args = [data[0], data[1], np.array(pred)]
            np.testing.assert_allclose(run_function(low, "f", args)[0], run_function(module, "f", args)[0], rtol=1e-6)


# Provenance -------------------------------------------------------------------------------


def test_every_produced_op_is_located_at_its_block_and_label():
    """RLX's `provenance_survives_lower`: each MIR op knows its HIR block and label."""
    text = """
    func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>, %b: tensor<4xf32>, %g: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
      %0 = hir.linear %x, %w, %b activation = gelu : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      %1 = hir.residual_rms_norm %0, %x, %g, %b eps = 1.0e-6 {rlx.label = "layers.0.norm"} : (tensor<2x4xf32>, tensor<2x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
      %2, %3 = hir.shared_linear_pair %1, %w, %w : (tensor<2x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>)
      func.return %2, %3 : tensor<2x4xf32>, tensor<2x4xf32>
    }
    """
    module, _ = parse_source(make_context(), text, "model.mlir")
    for policy in Policy:
        where = [(op.location.desc.data, op.location.location.line.data) for op in ops_of(lowered(module, policy))]
        expected_linear = [("linear", 3)] * (1 if policy is Policy.DIRECT else 3)
        expected_norm = [("layers.0.norm", 4)] * (1 if policy is Policy.DIRECT else 2)
        assert where == [*expected_linear, *expected_norm, ("shared_linear_pair[0]", 5), ("shared_linear_pair[1]", 5)]


def test_an_unlocated_block_still_names_its_label():
    module = lowered(block_graph("rms_norm", [[2, 4], [4], [4]]), "direct")
    (op,) = ops_of(module)
    assert isinstance(op.location, NameLoc) and op.location.desc == StringAttr("rms_norm")


# The LLaMA decoder -------------------------------------------------------------------------

LLAMA = {"batch": 2, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}


def llama_inputs(module: ModuleOp, config: dict) -> list[np.ndarray]:
    inputs = random_inputs(find_function(module), seed=5)
    inputs[1], inputs[2] = rope_tables(config["seq"], config["dim"] // config["n_heads"])
    return [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]


@pytest.mark.parametrize(
    "config",
    [LLAMA, {**LLAMA, "n_kv_heads": 4}, {**LLAMA, "n_kv_heads": 1, "vocab": 11}],
    ids=["gqa", "mha", "mqa-lm-head"],
)
def test_lowered_hir_decoder_is_the_mir_llama_graph(config):
    """Op for op and value for value: `rlx-lower-hir` of the HIR decoder is `testing.llama`."""
    mir = build_llama(2, **config)
    hir_module = build_llama_hir(2, **config)
    inputs = llama_inputs(mir, config)
    expected = run_function(mir, "llama", inputs)
    for policy in Policy:
        low = lowered(hir_module, policy)
        assert str(low) == str(mir)
        np.testing.assert_array_equal(run_function(low, "llama", inputs)[0], expected[0])
    np.testing.assert_allclose(run_function(hir_module, "llama", inputs)[0], expected[0], rtol=1e-6, atol=1e-6)


def test_each_decoder_layer_is_labelled_by_its_index():
    module = lowered(build_llama_hir(3, **LLAMA), "direct")
    labels = Counter(op.location.desc.data for op in ops_of(module))
    assert set(labels) == {"layers.0", "layers.1", "layers.2"}
    assert len(set(labels.values())) == 1  # every layer expands to the same number of ops


def test_n_layer_decoder_direct_equals_fusable():
    module = build_llama_hir(3, **LLAMA)
    inputs = llama_inputs(module, LLAMA)
    direct = run_function(lowered(module, "direct"), "llama", inputs)[0]
    fusable = run_function(lowered(module, "fusable"), "llama", inputs)[0]
    np.testing.assert_allclose(direct, fusable, rtol=1e-5, atol=1e-5)


def test_dynamic_batch_decoder_lowers_and_specialises_in_either_order():
    """`?` batch: `reshape` takes -1 there. Specialising first gives the MIR graph itself;
    lowering first keeps the -1s (rlx-specialize re-infers types, not attributes), same values."""
    config = {**LLAMA, "batch": 2}
    static_text = str(build_llama_hir(2, **config))
    dynamic_text = static_text.replace("tensor<2x8x32xf32>", "tensor<?x8x32xf32>")
    mir = build_llama(2, **config)
    inputs = llama_inputs(mir, config)
    expected = run_function(mir, "llama", inputs)[0]
    context = make_context()
    for pipeline in ("rlx-lower-hir,rlx-specialize", "rlx-specialize,rlx-lower-hir"):
        module, _ = parse_source(context, dynamic_text, "dynamic.mlir")
        for name in pipeline.split(","):
            if name == "rlx-lower-hir":
                LowerHirPass().apply(context, module)
            else:
                SpecializeShapesPass(shapes=("x=2x8x32",)).apply(context, module)
        module.verify()
        assert histogram(module) == histogram(mir)
        assert (str(module) == str(mir)) == pipeline.startswith("rlx-specialize")
        np.testing.assert_array_equal(run_function(module, "llama", inputs)[0], expected)


# Random graphs -----------------------------------------------------------------------------


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(graphs(max_ops=6, ops=[*hir.ALL_OPS, MatmulOp, SiluOp]))
def test_random_hir_graphs_lower_to_mir_computing_the_same(module):
    inputs = inputs_for(module)
    expected = run_function(module, "main", inputs)
    for policy in Policy:
        low = lowered(module, policy)
        assert not any(isinstance(op, HirOperation) for op in low.walk())
        assert with_locations(low) == with_locations(lowered_without_reuse(module, policy))
        for want, got in zip(expected, run_function(low, "main", inputs), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


# Reusing expansions ------------------------------------------------------------------------


def lowered_without_reuse(module: ModuleOp, policy: str) -> ModuleOp:
    copy = module.clone()
    PatternRewriteWalker(LowerBlockOp(Policy(policy), reuse=False), apply_recursively=False).rewrite_module(copy)
    copy.verify()
    return copy


def with_locations(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out, print_debuginfo=True).print_op(module)
    return out.getvalue()


def test_cloned_expansions_print_like_fresh_ones_locations_included():
    text = str(build_llama_hir(3, **{**LLAMA, "vocab": 7}))
    module, _ = parse_source(make_context(), text, "llama.mlir")  # every block located at its line
    for policy in Policy:
        assert with_locations(lowered(module, policy)) == with_locations(lowered_without_reuse(module, policy))


def test_look_alike_blocks_reuse_one_expansion_relabelled():
    b = GraphBuilder("f")
    x, w = b.input("x", [2, 4]), b.param("w", [4, 4])
    pairs = [b.hir.shared_linear_pair(x, w, w, label=f"layers.{i}.qk") for i in range(2)]
    b.output(*pairs[0], *pairs[1])
    module = lowered(b.module(), "direct")
    labels = [op.location.desc.data for op in ops_of(module)]
    assert labels == ["layers.0.qk[0]", "layers.0.qk[1]", "layers.1.qk[0]", "layers.1.qk[1]"]


def test_blocks_that_alias_operands_differently_are_not_confused():
    """`swiglu(x, w, w, d)` and `swiglu(x, u, g, d)` have equal types but different expansions."""
    b = GraphBuilder("f")
    x, w, u, g, d = (b.input(name, [2, 4] if name == "x" else [4, 4]) for name in "xwugd")
    b.output(b.hir.swiglu(x, w, w, d), b.hir.swiglu(x, u, g, d), b.hir.swiglu(x, g, u, d))
    module = b.module()
    inputs = random_inputs(find_function(module), seed=4)
    expected = run_function(module, "f", inputs)
    for policy in Policy:
        for want, got in zip(expected, run_function(lowered(module, policy), "f", inputs), strict=True):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert not np.allclose(expected[1], expected[2])


# Failures ---------------------------------------------------------------------------------


def test_an_unknown_policy_is_a_pass_error():
    module = block_graph("rms_norm", [[2, 4], [4], [4]])
    message = "rlx-lower-hir: unknown policy 'eager' \\(expected direct or fusable\\)"
    with pytest.raises(PassFailedException, match=message):
        LowerHirPass(policy="eager").apply(Context(), module)


@irdl_op_definition
class ScaleBlockOp(HirOperation):
    """A third-party block op `2 * x` (no lowering registered unless a test adds one)."""

    name = "thirdparty.scale_block"
    x = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    DEFAULT_LABEL: ClassVar[str] = "scale"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.x)]


def scale_module() -> ModuleOp:
    b = GraphBuilder("f")
    b.output(b.emit(ScaleBlockOp(b.input("x", [3]))))
    return b.module()


def test_a_block_without_a_lowering_is_reported_at_the_block():
    module = scale_module()
    with pytest.raises(OpError, match="'thirdparty.scale_block' has no lowering to MIR") as error:
        LowerHirPass().apply(Context(), module)
    assert isinstance(error.value.op, ScaleBlockOp)


def test_a_third_party_block_lowers_once_registered():
    LOWERINGS.add(ScaleBlockOp, lambda e, op, policy: [e.mir.add(op.x, op.x)])
    try:
        (op,) = ops_of(lowered(scale_module(), "direct"))
        assert op.name == "mir.add" and op.location.desc.data == "scale"
    finally:
        LOWERINGS.remove(ScaleBlockOp)


def test_a_lowering_that_changes_the_result_type_is_caught():
    LOWERINGS.add(ScaleBlockOp, lambda e, op, policy: [e.mir.concat(op.x, op.x, axis=0)])
    try:
        message = "lowering 'thirdparty.scale_block' produced tensor<6xf32> where the block's result is tensor<3xf32>"
        with pytest.raises(OpError, match=message):
            LowerHirPass().apply(Context(), scale_module())
    finally:
        LOWERINGS.remove(ScaleBlockOp)


def test_every_hir_op_has_a_lowering():
    assert LOWERINGS.missing(hir.ALL_OPS) == []
