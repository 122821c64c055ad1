"""Every pass preserves what the LLaMA benchmark graph computes (interpreter before/after)."""

from collections import Counter

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType

from rlx_xdsl.autodiff.grad import GradPass
from rlx_xdsl.autodiff.prepare import PrepareAdPass
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass
from rlx_xdsl.conversions.mir_to_linalg import ConvertMirToLinalgPass
from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.dialects.mir.elementwise import ExpOp, TanhOp
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.ir.sharding import annotate, read_layout
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.differential import assert_matches
from rlx_xdsl.testing.identities import kinds_for, wrap
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.testing.training import build_llama_training
from rlx_xdsl.testing.vmap_check import check_vmap
from rlx_xdsl.transforms import BACKEND_PASSES, FUSION_PASSES, get_all_passes
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass
from rlx_xdsl.transforms.canonicalize import CanonicalizePass
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass
from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass
from rlx_xdsl.transforms.fold_casts import FoldCastsPass
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass
from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass
from rlx_xdsl.transforms.shard_params import ShardParamsPass
from rlx_xdsl.transforms.specialize import SpecializeShapesPass, set_argument_types
from rlx_xdsl.transforms.unfuse import UnfusePass

CONFIG = {"batch": 2, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}


def assert_computes(module, inputs, expected, tol: float = 0.0):
    """`@llama` of `module` gives `expected`: bit for bit, or within `tol` (relative and absolute)."""
    for want, got in zip(expected, run_function(module, "llama", inputs), strict=True):
        if tol:
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
        else:
            np.testing.assert_array_equal(got, want)


def _inputs(module):
    inputs = random_inputs(module.ops.first, seed=11)
    inputs[1], inputs[2] = rope_tables(CONFIG["seq"], CONFIG["dim"] // CONFIG["n_heads"])
    # Keep weights small so two layers stay in a tame numeric range.
    return [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]


@pytest.fixture(scope="module")
def llama():
    module = build_llama(2, **CONFIG)
    inputs = _inputs(module)
    return str(module), inputs, run_function(module, "llama", inputs)


def test_every_pass_is_checked_here():
    """A new pass must add its before/after test on the LLaMA graph to this module."""
    assert set(get_all_passes()) == {
        "rlx-amp", "rlx-canonicalize", "rlx-dce", "rlx-fold-casts", "rlx-specialize", "rlx-unfuse",
        "rlx-lower-softmax-cross-entropy", "rlx-decompose-backward", "rlx-lower-hir", "rlx-plan-memory",
        "rlx-convert-mir-to-linalg",
        "rlx-prepare-ad", "rlx-grad", "rlx-insert-qdq", "rlx-quant-propagate", "rlx-quantize-weights",
        "rlx-vmap", "rlx-jvp", "rlx-hvp", "rlx-train-step", "rlx-shard-params",
    } | set(FUSION_PASSES) | set(BACKEND_PASSES)  # fmt: skip


@pytest.mark.parametrize("name", sorted(BACKEND_PASSES))
def test_backend_passes_keep_what_llama_computes(llama, name):
    """Each backend pass on the LLaMA graph (rlx-legalize: down to the primitive set)."""
    text, inputs, expected = llama
    module = parse_module(text)
    BACKEND_PASSES[name]()().apply(make_context(), module)
    module.verify()
    assert_computes(module, inputs, expected, tol=1e-5)


@pytest.mark.parametrize("name", sorted(FUSION_PASSES))
def test_fusion_passes_keep_what_llama_computes(llama, name):
    """Each fusion pass alone, and the pipeline, then `rlx-unfuse` back to primitives: same outputs.

    Fusions that regroup matmuls (one wide qkv matmul) may change the last bits.
    """
    text, inputs, expected = llama
    module = parse_module(text)
    FUSION_PASSES[name]()().apply(Context(), module)
    module.verify()
    assert_computes(module, inputs, expected, tol=1e-5)
    UnfusePass().apply(Context(), module)
    module.verify()
    assert_computes(module, inputs, expected, tol=1e-5)


@pytest.mark.parametrize("target", ["cpu", "best"])
def test_fusion_pipeline_fuses_every_llama_layer(llama, target):
    text, inputs, expected = llama
    module = parse_module(text)
    FusionPipelinePass(target=target).apply(Context(), module)
    module.verify()
    ops = Counter(op.name for op in module.ops.first.body.block.ops)
    assert ops["mir.fused_attention_block"] == 2 and ops["mir.fused_swiglu"] == 2
    assert "mir.attention" not in ops and "mir.silu" not in ops
    assert_computes(module, inputs, expected, tol=1e-5)


def test_unfuse_leaves_a_graph_of_primitives_unchanged(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    UnfusePass().apply(Context(), module)
    assert str(module) == text


@pytest.mark.parametrize("pass_", [LowerSoftmaxCrossEntropyPass(), DecomposeBackwardPass()], ids=lambda p: p.name)
def test_sce_and_backward_passes_leave_a_forward_graph_unchanged(llama, pass_):
    text, inputs, expected = llama
    module = parse_module(text)
    pass_.apply(make_context(), module)
    assert str(module) == text


@pytest.fixture(scope="module")
def training():
    module = build_llama_training(2, **CONFIG)
    inputs = _inputs(module)
    return str(module), inputs, run_function(module, "llama", inputs)


@pytest.mark.parametrize("pass_", [LowerSoftmaxCrossEntropyPass(), DecomposeBackwardPass()], ids=lambda p: p.name)
def test_sce_lowering_and_backward_decomposition_keep_the_training_graph_outputs(training, pass_):
    text, inputs, expected = training
    module = parse_module(text)
    pass_.apply(make_context(), module)
    module.verify()
    assert str(module) != text
    got = run_function(module, "llama", inputs)
    for want, out in zip(expected, got, strict=True):
        np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-5)


def test_training_graph_after_both_passes_holds_only_primitives(training):
    text, inputs, expected = training
    module = parse_module(text)
    LowerSoftmaxCrossEntropyPass().apply(make_context(), module)
    DecomposeBackwardPass().apply(make_context(), module)
    module.verify()
    assert not any(op.name.endswith("_backward") or "cross_entropy" in op.name for op in module.walk())
    for want, out in zip(expected, run_function(module, "llama", inputs), strict=True):
        np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-5)


def test_dce_removes_only_dead_ops(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    # Add a dead chain next to the live graph: rlx-dce must delete exactly that.
    block = module.ops.first.body.block
    tanh = TanhOp(block.args[0])
    block.insert_ops_before([tanh, ExpOp(tanh.result)], block.last_op)
    assert str(module) != text
    module.verify()
    DeadCodeEliminationPass().apply(Context(), module)
    assert str(module) == text
    assert_computes(module, inputs, expected)


def test_specialize_restores_the_static_graph_from_a_dynamic_one(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    f = module.ops.first
    types = [a.type for a in f.args]
    dynamic = list(types)
    for i in range(3):  # x [batch, seq, dim], cos and sin [seq, head_dim/2]
        shape = [DYNAMIC] * (types[i].get_num_dims() - 1) + [types[i].get_shape()[-1]]
        dynamic[i] = TensorType(types[i].element_type, shape)
    set_argument_types([(f, dynamic)])
    module.verify()
    assert "tensor<?x?x32xf32>" in str(module)
    assert_computes(module, inputs, expected, tol=1e-6)

    shapes = ("x=2x8x32", "cos=8x4", "sin=8x4")
    SpecializeShapesPass(shapes=shapes).apply(Context(), module)
    module.verify()
    assert str(module) == text
    assert_computes(module, inputs, expected)


def test_canonicalize_keeps_what_llama_computes_and_folds_identities_added_to_it(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    CanonicalizePass().apply(Context(), module)  # attention over repeated KV heads reads the grouped ones
    canonical = str(module)
    assert canonical.count("mir.concat") < text.count("mir.concat")
    assert_computes(module, inputs, expected)
    CanonicalizePass().apply(Context(), module)
    assert str(module) == canonical  # nothing left to fold

    # Wrap every value in a chain that computes nothing, cycling through the kinds.
    block = module.ops.first.body.block
    original_ops = list(block.ops)
    values = [*block.args, *(r for op in original_ops for r in op.results)]
    rng = np.random.default_rng(5)
    for index, value in enumerate(values):
        kinds = kinds_for(value)
        wrap(value, kinds[index % len(kinds)], rng)
    module.verify()
    assert len(list(block.ops)) >= len(original_ops) + len(values)
    assert_computes(module, inputs, expected)

    CanonicalizePass().apply(Context(), module)
    module.verify()
    assert str(module) == canonical
    assert_computes(module, inputs, expected)


def test_shard_params_splits_the_llama_weights_and_keeps_what_it_computes(llama):
    """Shardings are XLA's business: on the interpreter the graph computes the same."""
    text, inputs, expected = llama
    module = parse_module(text)
    f = find_function(module)
    annotate(module, f, {"data": 2}, {})
    ShardParamsPass(axis="data", min_size=64).apply(Context(), module)
    module.verify()
    layout = read_layout(module, find_function(module))
    assert sum(spec is not None for spec in layout.args) >= 4
    assert_computes(module, inputs, expected)


AMP_ERROR_BOUNDS = {
    "always-f32": 0.0,
    "always-f16": 5e-3,
    "auto-mixed-conservative": 5e-3,
    "auto-mixed": 5e-3,
    "auto-mixed-bf16": 3e-2,
    "torch-cuda": 5e-3,
    "torch-cpu": 3e-2,
}
"""max|amp - f32| / max|f32| of the LLaMA output per policy (measured: 8e-4 for the f16
policies, 4.3e-3 for auto-mixed-bf16, 1.6e-3 for torch-cpu's bf16)."""


@pytest.mark.parametrize("policy", sorted(AMP_ERROR_BOUNDS))
def test_amp_stays_within_its_error_bound_and_leaves_nothing_to_fold(llama, policy):
    text, inputs, expected = llama
    module = parse_module(text)
    AutoMixedPrecisionPass(policy=policy).apply(Context(), module)
    module.verify()
    after_amp = str(module)
    assert (after_amp == text) == (policy == "always-f32")
    (got,), (want,) = run_function(module, "llama", inputs), expected
    assert got.dtype == want.dtype == np.float32
    assert np.max(np.abs(got - want)) <= AMP_ERROR_BOUNDS[policy] * np.max(np.abs(want))
    FoldCastsPass().apply(Context(), module)
    assert str(module) == after_amp


def test_fold_casts_leaves_a_graph_without_casts_unchanged(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    FoldCastsPass().apply(Context(), module)
    assert str(module) == text


@pytest.mark.parametrize("policy", ["direct", "fusable"])
def test_lower_hir_leaves_mir_alone_and_expands_the_hir_decoder_into_it(llama, policy):
    text, inputs, expected = llama
    module = parse_module(text)
    LowerHirPass(policy=policy).apply(Context(), module)
    assert str(module) == text  # no block ops: nothing to lower
    hir_module = build_llama_hir(2, **CONFIG)
    assert all(op.name.startswith(("hir.", "func.", "builtin.")) for op in hir_module.walk())
    LowerHirPass(policy=policy).apply(Context(), hir_module)
    hir_module.verify()
    assert str(hir_module) == text
    for want, got in zip(expected, run_function(hir_module, "llama", inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_plan_memory_runs_the_graph_on_one_arena_with_the_same_results(llama):
    text, inputs, expected = llama
    module = parse_module(text)
    PlanMemoryPass().apply(Context(), module)
    module.verify()
    plan = plan_of(module.ops.first)
    assert plan.arena_bytes.value.data == plan.lower_bound_bytes.value.data < plan.naive_bytes.value.data
    reparsed = parse_module(str(module))  # the plan survives printing and parsing
    for want, got in zip(expected, run_function(reparsed, "llama", inputs), strict=True):
        np.testing.assert_array_equal(got, want)


def test_linalg_lowering_computes_the_graph_on_iree(llama):
    """The lowered graph leaves MIR, and IREE computes what the interpreter did."""
    text, inputs, expected = llama
    module = parse_module(text)
    ConvertMirToLinalgPass().apply(Context(), module)
    assert not any(op.name.startswith("mir.") for op in module.walk())
    module.verify()
    (got,) = run_function(parse_module(text), "llama", inputs, backend="iree")
    assert_matches(got, expected[0], approximate=True)


def test_prepare_ad_keeps_the_training_graph_outputs_and_leaves_no_backward_kernel(training):
    text, inputs, expected = training
    module = parse_module(text)
    PrepareAdPass().apply(make_context(), module)
    module.verify()
    assert not any(op.name.endswith("_backward") for op in module.walk())
    for want, out in zip(expected, run_function(module, "llama", inputs), strict=True):
        np.testing.assert_allclose(out, want, rtol=2e-4, atol=2e-5)


def weights_of(inputs) -> tuple[str, ...]:
    """The positions of @llama's weights (after x and the rope tables), as `wrt`."""
    return tuple(str(i) for i in range(3, len(inputs)))


def added_beside_llama(text: str, compiler_pass):
    """The module after `compiler_pass`, verified, with @llama as it was."""
    module = parse_module(text)
    compiler_pass.apply(make_context(), module)
    module.verify()
    assert str(module.ops.first) == str(parse_module(text).ops.first)
    return module


def test_grad_keeps_the_llama_graph_and_its_gradient_matches_directional_differences(llama):
    """The forward is untouched, @llama_grad recomputes its output, and the gradient of
    `sum(c * out)` along a random direction of every weight matches a central difference
    (in f32: eps 1e-2, tolerance 2e-2)."""
    text, inputs, expected = llama
    module = added_beside_llama(text, GradPass(func="llama", wrt=weights_of(inputs)))
    rng = np.random.default_rng(2)
    cotangent = rng.standard_normal(expected[0].shape).astype(np.float32)
    out, *gradients = run_function(module, "llama_grad", [*inputs, cotangent])
    np.testing.assert_array_equal(out, expected[0])
    directions = [rng.standard_normal(x.shape).astype(np.float32) for x in inputs[3:]]
    predicted = sum(float(np.sum(g * d)) for g, d in zip(gradients, directions, strict=True))

    def loss(t):
        moved = [*inputs[:3], *(x + t * d for x, d in zip(inputs[3:], directions))]
        return float(np.sum(cotangent * run_function(module, "llama", moved)[0], dtype=np.float64))

    numeric = (loss(1e-2) - loss(-1e-2)) / 2e-2
    np.testing.assert_allclose(predicted, numeric, rtol=2e-2)


def test_jvp_keeps_the_llama_graph_and_its_tangent_matches_directional_differences(llama):
    """@llama is untouched, @llama_jvp recomputes its output, and the tangent along a random
    direction of every weight matches a central difference of @llama (f32: eps 1e-2)."""
    from rlx_xdsl.autodiff.jvp import JvpPass

    text, inputs, expected = llama
    module = added_beside_llama(text, JvpPass(func="llama", wrt=weights_of(inputs)))
    rng = np.random.default_rng(3)
    directions = [rng.standard_normal(x.shape).astype(np.float32) for x in inputs[3:]]
    out, tangent = run_function(module, "llama_jvp", [*inputs, *directions])
    np.testing.assert_array_equal(out, expected[0])

    def moved(t):
        weights = [x + t * d for x, d in zip(inputs[3:], directions, strict=True)]
        return run_function(module, "llama", [*inputs[:3], *weights])[0].astype(np.float64)

    numeric = (moved(1e-2) - moved(-1e-2)) / 2e-2
    np.testing.assert_allclose(tangent, numeric, rtol=2e-2, atol=2e-2 * np.abs(numeric).max())


def test_hvp_matches_central_differences_of_the_llama_gradient(llama):
    """@llama_hvp's gradient is rlx-grad's (of sum(out)), and its Hessian-vector product along
    a random direction of the FFN weights of layer 1 matches a central difference of that gradient."""
    from rlx_xdsl.autodiff.hvp import HvpPass
    from rlx_xdsl.ir.graph import argument_names

    text, inputs, _ = llama
    module = parse_module(text)
    names = argument_names(module.ops.first)
    wrt = [i for i, n in enumerate(names) if n.startswith("layers.1.w_")]
    HvpPass(func="llama", wrt=tuple(str(i) for i in wrt)).apply(make_context(), module)
    module.verify()
    rng = np.random.default_rng(4)
    v = [rng.standard_normal(inputs[i].shape).astype(np.float32) for i in wrt]

    def run_at(t):
        moved = list(inputs)
        for i, d in zip(wrt, v, strict=True):
            moved[i] = (inputs[i] + t * d).astype(np.float32)
        return run_function(module, "llama_hvp", [*moved, *v])

    _, *rest = run_at(0.0)
    gradients, hv = rest[: len(wrt)], rest[len(wrt) :]
    plus, minus = run_at(1e-2)[1 : 1 + len(wrt)], run_at(-1e-2)[1 : 1 + len(wrt)]
    for got, p, m in zip(hv, plus, minus, strict=True):
        numeric = (p.astype(np.float64) - m) / 2e-2
        np.testing.assert_allclose(got, numeric, rtol=3e-2, atol=3e-2 * np.abs(numeric).max())
    assert all(np.abs(g).max() > 0 for g in gradients)


def test_train_step_keeps_the_llama_graph_and_steps_against_its_gradient(llama):
    """@llama is untouched; one SGD step of @llama_train_step moves every weight (the
    rlx.param arguments) by -lr times rlx-grad's gradient of sum(out)."""
    from rlx_xdsl.autodiff.train_step import TrainStepPass

    text, inputs, expected = llama
    module = added_beside_llama(text, TrainStepPass(func="llama", optimizer="sgd", lr=0.5))
    GradPass(func="llama", wrt=weights_of(inputs)).apply(make_context(), module)
    out, *new_weights = run_function(module, "llama_train_step", [*inputs, np.float32(1)])
    np.testing.assert_array_equal(out, expected[0])
    _, *gradients = run_function(module, "llama_grad", [*inputs, np.ones_like(expected[0])])
    assert len(new_weights) == len(gradients) == len(inputs) - 3
    for new, old, g in zip(new_weights, inputs[3:], gradients, strict=True):
        np.testing.assert_allclose(new, old - 0.5 * g, rtol=1e-5, atol=1e-6)


def test_vmap_keeps_the_llama_graph_and_batches_it_example_by_example(llama):
    """@llama is untouched and @llama_vmap over the hidden state gives, for each example,
    what @llama computes on it (the weights and rope tables shared)."""
    text, inputs, _ = llama
    module = parse_module(text)
    rng = np.random.default_rng(5)
    examples = [inputs, [(inputs[0] + rng.standard_normal(inputs[0].shape)).astype(np.float32), *inputs[1:]]]
    check_vmap(module, "llama", examples, [0], rtol=1e-4, atol=1e-5)
    assert print_ir(find_function(module, "llama")) == print_ir(find_function(parse_module(text), "llama"))


def test_insert_qdq_on_the_layer_weights_is_running_on_quantised_weights(llama, tmp_path):
    """Per-column int8 calibration of every 2-D weight: the pass computes what the graph
    computes on the weights ONNX quantises and dequantises, and stays near the f32 result."""
    import json

    from rlx_xdsl.ir.graph import argument_names
    from rlx_xdsl.testing.oracles import onnx_run
    from rlx_xdsl.transforms.quant.insert_qdq import InsertQdqPass

    text, inputs, expected = llama
    module = parse_module(text)
    calibration, quantised = {}, []
    for name, x in zip(argument_names(module.ops.first), inputs):
        if x.ndim == 2 and name.startswith("layers."):
            scales = (np.abs(x).max(axis=0) / 127).astype(np.float32)
            calibration[name] = {"scales": scales.tolist(), "axis": 1}
            zeros = np.zeros(len(scales), np.int8)
            q = onnx_run("QuantizeLinear", [x, scales, zeros], axis=1)
            x = onnx_run("DequantizeLinear", [q, scales, zeros], axis=1)
        quantised.append(x)
    path = tmp_path / "calibration.json"
    path.write_text(json.dumps(calibration))
    InsertQdqPass(calibration=str(path)).apply(Context(), module)
    module.verify()
    got = run_function(module, "llama", inputs)
    for want, out in zip(run_function(parse_module(text), "llama", quantised), got, strict=True):
        np.testing.assert_array_equal(out, want)
    for want, out in zip(expected, got, strict=True):
        np.testing.assert_allclose(out, want, rtol=0.1, atol=0.05)


def test_quant_propagate_keeps_what_llama_computes(llama):
    """No fake quantisation in the graph: nothing to drop, outputs unchanged."""
    from rlx_xdsl.transforms.quant.propagate import QuantPropagatePass

    text, inputs, expected = llama
    module = parse_module(text)
    QuantPropagatePass().apply(Context(), module)
    assert str(module) == text
    assert_computes(module, inputs, expected)


@pytest.mark.parametrize(("scheme", "block"), [("int8_block", 16), ("gguf_q8_0", None)])
def test_quantize_weights_keeps_llama_close(llama, scheme, block):
    """Every projection of both layers on packed weights: near the f32 outputs, and the
    same as the original graph on the decoded weights."""
    from rlx_xdsl.formats.quantpack import pack
    from rlx_xdsl.ir.graph import argument_names
    from rlx_xdsl.transforms.quant.quantize_weights import QuantizeWeightsPass

    text, inputs, expected = llama
    module = parse_module(text)
    names = argument_names(module.ops.first)
    QuantizeWeightsPass(scheme=scheme, block_size=block).apply(Context(), module)
    module.verify()
    packed, decoded = [], []
    for name, x in zip(names, inputs):
        if x.ndim == 2 and name.startswith("layers."):
            arrays = pack(x, scheme, block)
            packed += arrays.values()
            one = np.eye(x.shape[0], dtype=np.float32)
            decoded.append(run_function(_single_dequant(x.shape, arrays, scheme, block), "w", [one, *arrays.values()])[0])
        else:
            packed.append(x)
            decoded.append(x)
    got = run_function(module, "llama", packed)
    for want, out in zip(run_function(parse_module(text), "llama", decoded), got, strict=True):
        np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-5)
    for want, out in zip(expected, got, strict=True):
        np.testing.assert_allclose(out, want, rtol=0.1, atol=0.05)


def _single_dequant(shape, arrays, scheme, block):
    """`@w(I, params) = dequant_matmul(I, params)`: the decoded weight (the decoding itself
    is checked against ml_dtypes and gguf in `tests/dialects/mir/test_quant*.py`)."""
    from rlx_xdsl.building.builder import GraphBuilder
    from rlx_xdsl.dtypes import dtype_of_numpy

    b = GraphBuilder("w")
    eye = b.input("eye", [shape[0], shape[0]])
    params = [b.input(f"p{i}", a.shape, dtype_of_numpy(a.dtype).element_type) for i, a in enumerate(arrays.values())]
    b.output(b.mir.dequant_matmul(eye, *params, scheme=scheme, block_size=block))
    return b.module()
