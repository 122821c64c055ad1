"""`rlx-amp`: policies, cast caching, what never changes, and the error each policy costs."""

from collections.abc import Sequence

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType, bf16, f16, f32
from xdsl.dialects.test import TestOp
from xdsl.ir import Operation
from xdsl.irdl import irdl_op_definition, operand_def, result_def, traits_def
from xdsl.traits import Pure
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.base import RlxOperation, tensor_type
from rlx_xdsl.dialects.hir.blocks import LlamaDecoderBlockOp
from rlx_xdsl.dialects.mir import attention as at
from rlx_xdsl.dialects.mir import contraction as ct
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir import indexing as ix
from rlx_xdsl.dialects.mir import norm as nm
from rlx_xdsl.dialects.mir import reduction as rd
from rlx_xdsl.dialects.mir import shape as sh
from rlx_xdsl.dialects.traits import REDUCTION, operand_roles
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import fmt_shape
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.testing.loosen import loosen_returned
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass
from rlx_xdsl.transforms.amp.policy import CLASS_POLICIES
from rlx_xdsl.transforms.amp.presets import TORCH_PRESETS
from rlx_xdsl.transforms.fold_casts import FoldCastsPass

POLICIES = [*CLASS_POLICIES, *TORCH_PRESETS]
LOW_POLICIES = [p for p in POLICIES if p not in ("always-f32", "custom")]
PROPERTY = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def amp(module: ModuleOp, **options) -> ModuleOp:
    AutoMixedPrecisionPass(**options).apply(Context(), module)
    module.verify()
    return module


def casts(module: ModuleOp) -> list[ew.CastOp]:
    return [op for op in module.walk() if isinstance(op, ew.CastOp)]


def element(value) -> object:
    return tensor_type(value).element_type


def returned(module: ModuleOp) -> list:
    function = module.ops.first
    return list(function.body.block.last_op.operands)


def mlp(*, width: int = 4) -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [2, width])
    w = b.param("w", [width, 3])
    b.output(b.matmul(x, w))
    return b.module()


# RLX's two tests -----------------------------------------------------------------------


def test_always_f32_is_a_no_op():
    """RLX `always_f32_is_noop`: input, param and matmul stay, no cast appears."""
    module = mlp()
    before = str(module)
    assert str(amp(module, policy="always-f32")) == before
    assert casts(module) == []


def test_auto_mixed_inserts_casts_at_the_boundary():
    """RLX `auto_mixed_inserts_casts_at_boundary`: x, w cast to f16, matmul in f16, output cast back."""
    module = amp(mlp(), policy="auto-mixed")
    (matmul,) = [op for op in module.walk() if isinstance(op, ct.MatmulOp)]
    assert [element(v) for v in matmul.operands] == [f16, f16]
    assert all(isinstance(v.owner, ew.CastOp) and element(v.owner.input) == f32 for v in matmul.operands)
    assert element(matmul.result) == f16
    (output,) = returned(module)
    assert isinstance(output.owner, ew.CastOp) and element(output) == f32
    assert output.owner.input is matmul.result
    assert len(casts(module)) == 3


# Casts are shared ------------------------------------------------------------------------


def test_two_consumers_share_one_cast_placed_after_the_source():
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    w = b.param("w", [4, 4])
    b.output(b.matmul(x, w), b.matmul(x, x))
    module = amp(b.module(), policy="auto-mixed")
    x_casts = [c for c in casts(module) if c.input is module.ops.first.args[0]]
    assert len(x_casts) == 1
    assert module.ops.first.body.block.first_op is x_casts[0]  # right after the argument's definition
    assert len(list(x_casts[0].result.uses)) == 3


def test_a_value_returned_twice_gets_one_cast():
    b = GraphBuilder("f")
    y = b.silu(b.input("x", [4]))
    b.output(y, y)
    module = amp(b.module(), policy="auto-mixed")
    first, second = returned(module)
    assert first is second and isinstance(first.owner, ew.CastOp)
    assert len(casts(module)) == 2  # the input to f16, the output back to f32


def test_a_cast_the_program_already_has_is_reused_not_duplicated():
    module = parse_module("""
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xf32>) {
      %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %h = mir.cast %x : (tensor<4xf32>) -> tensor<4xf16>
      func.return %h, %e : tensor<4xf16>, tensor<4xf32>
    }""")
    amp(module, policy="auto-mixed")
    x_casts = [c for c in casts(module) if c.input is module.ops.first.args[0]]
    assert len(x_casts) == 1 and x_casts[0].result.name_hint == "h"
    assert module.ops.first.body.block.first_op is x_casts[0]  # moved above the exp that now uses it


# Op classes come from traits -------------------------------------------------------------


@irdl_op_definition
class ThirdPartyNormOp(RlxOperation):
    """Another project's op declaring the reduction class: `x / sum(|x|)`."""

    name = "thirdparty.l1_normalize"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


@irdl_op_definition
class ThirdPartyUnclassifiedOp(RlxOperation):
    """Another project's op that declares no AMP class: `2 * x`."""

    name = "thirdparty.double"
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure())
    assembly_format = "$input attr-dict `:` functional-type(operands, results)"

    def __init__(self, x):
        super().__init__(operands=[x])

    def infer_result_types(self):
        return [tensor_type(self.input)]


def test_third_party_ops_are_classified_by_their_traits():
    """Under custom compute=bf16 reduction=f16: the class-less op is compute (RLX's fallback)."""
    b = GraphBuilder("f")
    x = b.input("x", [4])
    normalized = b.emit(ThirdPartyNormOp(x))
    doubled = b.emit(ThirdPartyUnclassifiedOp(x))
    b.output(normalized, doubled)
    module = amp(b.module(), policy="custom", compute="bf16", reduction="f16")
    by_class = {type(op): op for op in module.walk()}
    assert element(by_class[ThirdPartyNormOp].result) == f16
    assert element(by_class[ThirdPartyUnclassifiedOp].result) == bf16


def test_stop_gradient_is_data_movement_not_the_compute_fallback():
    """RLX's op_kind has no StopGradient arm (its fallback is compute); ours is data movement
    (docs/deviations.md): under compute=bf16 data-movement=f16 it takes f16."""
    b = GraphBuilder("f")
    b.output(b.stop_gradient(b.input("x", [4])))
    module = amp(b.module(), policy="custom", compute="bf16", data_movement="f16")
    (stop,) = [op for op in module.walk() if op.name == "mir.stop_gradient"]
    assert element(stop.results[0]) == f16


def test_ops_of_other_frameworks_keep_their_types():
    """`test.op` cannot re-infer its types: its operand is cast back to what it was written with."""
    b = GraphBuilder("f")
    y = b.silu(b.input("x", [4]))
    foreign = b.emit(TestOp(operands=[y], result_types=[TensorType(f32, [4])]))
    b.output(b.exp(foreign))
    module = amp(b.module(), policy="auto-mixed")
    (test_op,) = [op for op in module.walk() if isinstance(op, TestOp)]
    assert element(test_op.operands[0]) == f32 and isinstance(test_op.operands[0].owner, ew.CastOp)
    assert element(test_op.results[0]) == f32


# What never changes ------------------------------------------------------------------------


def test_float_encoded_indices_stay_exact_under_bf16():
    """bf16 holds 256 and 258 but not 257: the gather must still read row 257 (and 259 = 257 + 2)."""
    b = GraphBuilder("f")
    table = b.input("table", [300, 2])
    ids = b.input("ids", [2])
    shifted = b.add(ids, b.constant(np.full(2, 2.0)))
    b.output(b.gather(table, ids, axis=0), b.gather(table, shifted, axis=0))
    module = amp(b.module(), policy="auto-mixed-bf16")
    table_values = np.arange(600, dtype=np.float32).reshape(300, 2) / 7
    ids_values = np.array([257, 5], np.float32)
    direct, via_add = run_function(module, "f", [table_values, ids_values])
    as_bf16 = table_values.astype(bf16_numpy()).astype(np.float32)
    np.testing.assert_array_equal(direct, as_bf16[[257, 5]])
    np.testing.assert_array_equal(via_add, as_bf16[[259, 7]])
    (add,) = [op for op in module.walk() if isinstance(op, ew.AddOp)]
    assert element(add.result) == f32  # it computes an index: left as written


def bf16_numpy():
    import ml_dtypes

    return ml_dtypes.bfloat16


def test_integer_and_bool_values_never_change():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    n = b.input("n", [4], "i32")
    above = b.compare(x, b.constant(np.zeros(4)), predicate="gt")
    b.output(b.where(above, b.relu(n), b.neg(n)), b.where(above, x, b.silu(x)), b.topk(x, k=2)[1])
    module = amp(b.module(), policy="always-f16")
    f = module.ops.first
    assert [str(t) for t in f.function_type.outputs] == ["tensor<4xi32>", "tensor<4xf32>", "tensor<2xi64>"]
    for op in module.walk():
        if isinstance(op, ew.CastOp):
            assert all(tensor_type(v).element_type in (f32, f16) for v in (op.input, op.result))
        if isinstance(op, ew.CompareOp):
            assert element(op.result).width.data == 1
            assert [element(v) for v in op.operands] == [f16, f16]  # the comparison computes in f16


def test_explicit_casts_keep_their_meaning():
    """`cast(exp(x) -> f16)` is an identity once exp computes in f16 and goes; `-> i32` stays."""
    module = parse_module("""
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf16>, tensor<4xi32>, tensor<4xf32>) {
      %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %h = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
      %i = mir.cast %e : (tensor<4xf32>) -> tensor<4xi32>
      %s = mir.cast %e : (tensor<4xf32>) -> tensor<4xf32>
      func.return %h, %i, %s : tensor<4xf16>, tensor<4xi32>, tensor<4xf32>
    }""")
    amp(module, policy="auto-mixed")
    h, i, s = returned(module)
    assert isinstance(h.owner, ew.ExpOp) and element(h) == f16
    assert isinstance(i.owner, ew.CastOp) and element(i.owner.input) == f16 and str(element(i)) == "i32"
    assert isinstance(s.owner, ew.CastOp) and element(s) == f32


def test_a_cast_left_behind_by_a_dropped_identity_merges_with_the_cached_one():
    """`cast(cast(e -> f16) -> f32)`: once `e` is f16 the inner cast goes and the outer one is
    the f32 cast the pass already made for `test.op`: one cast remains, nothing is left to fold."""
    module = parse_module("""
    func.func @f(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
      %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>
      %k = "test.op"(%e) : (tensor<4xf32>) -> tensor<4xf32>
      %c = mir.cast %e : (tensor<4xf32>) -> tensor<4xf16>
      %d = mir.cast %c : (tensor<4xf16>) -> tensor<4xf32>
      func.return %k, %d : tensor<4xf32>, tensor<4xf32>
    }""")
    amp(module, policy="auto-mixed")
    (exp,) = [op for op in module.walk() if isinstance(op, ew.ExpOp)]
    (exp_f32,) = [c for c in casts(module) if c.input is exp.result]
    assert returned(module)[1] is exp_f32.result
    after_amp = str(module)
    FoldCastsPass().apply(Context(), module)
    assert str(module) == after_amp


def test_ops_needing_equal_operand_dtypes_get_them():
    """Norm parameters and concat operands follow their op, whatever precision their producers chose."""
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    h = b.matmul(x, b.param("w", [4, 4]))
    normed = b.layer_norm(h, b.param("gamma", [4]), b.param("beta", [4]), eps=1e-5)
    b.output(b.concat(normed, x, axis=0))
    text = str(b.module())
    for policy in ("auto-mixed-conservative", "torch-cuda", "custom"):
        module = amp(parse_module(text), policy=policy)
        for op in module.walk():
            if isinstance(op, nm.LayerNormOp | sh.ConcatOp):
                assert len({element(v) for v in op.operands}) == 1, (policy, str(op))


def test_arguments_and_results_keep_their_declared_types():
    b = GraphBuilder("f")
    x = b.input("x", [2, 4], "bf16")
    w = b.param("w", [4, 4])
    b.output(b.matmul(x, w), b.exp(w))
    module = b.module()
    signature = module.ops.first.function_type
    amp(module, policy="always-f16")
    assert module.ops.first.function_type == signature
    assert [element(v) for v in module.ops.first.args] == [bf16, f32]


def test_region_bodies_are_rewritten_like_functions():
    module = parse_module("""
    func.func @f(%p: tensor<1xi1>, %x: tensor<4xf32>) -> tensor<4xf32> {
      %r = mir.if %p (%x) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
      ^bb0(%a: tensor<4xf32>):
        %e = mir.exp %a : (tensor<4xf32>) -> tensor<4xf32>
        mir.yield %e : tensor<4xf32>
      } else {
      ^bb0(%b: tensor<4xf32>):
        mir.yield %b : tensor<4xf32>
      }
      %s = mir.silu %r : (tensor<4xf32>) -> tensor<4xf32>
      func.return %s : tensor<4xf32>
    }""")
    x = np.linspace(-2, 2, 4, dtype=np.float32)
    expected = [run_function(module, "f", [np.array([flag]), x])[0] for flag in (True, False)]
    amp(module, policy="auto-mixed")
    (exp,) = [op for op in module.walk() if isinstance(op, ew.ExpOp)]
    assert element(exp.result) == f16
    for flag, want in zip((True, False), expected):
        np.testing.assert_allclose(run_function(module, "f", [np.array([flag]), x])[0], want, rtol=2e-3)


# HIR ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("policy", ["auto-mixed-conservative", "torch-cpu", "always-f32"])
def test_hir_blocks_are_refused_with_a_hint_to_lower_first(policy):
    """A block holds ops of several precisions: AMP on it would differ from AMP after rlx-lower-hir."""
    module = build_llama_hir(n_layers=1)
    before = str(module)
    with pytest.raises(OpError, match="'hir.llama_decoder_block' is an HIR block .* run rlx-lower-hir first") as caught:
        AutoMixedPrecisionPass(policy=policy).apply(Context(), module)
    assert isinstance(caught.value.op, LlamaDecoderBlockOp)
    assert str(module) == before


# Options and overrides ---------------------------------------------------------------------


def test_per_op_overrides_take_precedence():
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    b.output(b.softmax(b.matmul(x, b.param("w", [4, 4])), axis=-1))
    module = amp(b.module(), policy="auto-mixed", ops=("mir.softmax:f32", "mir.matmul:bf16"))
    kinds = {type(op): op for op in module.walk()}
    assert element(kinds[rd.SoftmaxOp].result) == f32
    assert element(kinds[ct.MatmulOp].result) == bf16


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"policy": "f8"}, "policy=f8: 'f8' is not one of always-f32, always-f16, auto-mixed-conservative"),
        ({"policy": "custom", "compute": "i32"}, "compute=i32: 'i32' is not one of f32, f16, bf16"),
        ({"data_movement": "f64"}, "data-movement=f64: 'f64' is not one of f32, f16, bf16"),
        ({"policy": "torch-cpu", "low": "f32"}, "low=f32: 'f32' is not one of f16, bf16"),
        ({"policy": "auto-mixed", "low": "f16"}, "only policy=torch-cuda and policy=torch-cpu have a low"),
        ({"policy": "torch-cuda", "reduction": "f32"}, "policy=torch-cuda chooses per op"),
        ({"ops": ("mir.softmax",)}, "expected OP:PRECISION"),
        ({"ops": ("mir.softmax:f8",)}, "ops=mir.softmax:f8: 'f8' is not one of f32, f16, bf16, keep, promote"),
        ({"ops": ("mir.exp:f16", "mir.exp:f32")}, "'mir.exp' is given twice"),
    ],
)
def test_bad_options_name_the_option_and_the_allowed_values(options, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        AutoMixedPrecisionPass(**options)


def test_an_unknown_op_in_ops_is_an_error():
    with pytest.raises(PassFailedException, match="no op is named 'mir.softmx'"):
        AutoMixedPrecisionPass(ops=("mir.softmx:f32",)).apply(Context(), mlp())


def test_low_precision_of_a_torch_preset():
    module = amp(mlp(), policy="torch-cuda", low="bf16")
    (matmul,) = [op for op in module.walk() if isinstance(op, ct.MatmulOp)]
    assert element(matmul.result) == bf16


# The PyTorch presets against autocast's own lists -------------------------------------------
#
# Golden data: the torch ops of `torch.testing._internal.autocast_test_lists` (torch 2.13)
# and each MIR op's torch counterpart. An op on a "16" list runs in low precision, on an
# "fp32" list in f32, and unlisted ops promote. CUDA autocast cannot run on a CPU build, so
# its lists are the oracle; torch-cpu is checked against CPU autocast itself, op by op, in
# test_amp_torch.py (CPU's lists leave out `prod` and `linalg_solve`, which it runs in f32).

CUDA_LOW = {"conv2d", "matmul", "einsum", "scaled_dot_product_attention", "mm", "bmm"}
CUDA_F32 = {
    "exp", "log", "rsqrt", "tan", "pow", "softmax", "log_softmax", "layer_norm", "rms_norm",
    "group_norm", "cumsum", "sum", "prod", "nll_loss",
}  # fmt: skip

TORCH_NAME = {
    ct.MatmulOp: "matmul", ct.DotGeneralOp: ("einsum", "bmm"), at.AttentionOp: ("scaled_dot_product_attention",
    "_native_multi_head_attention"), rd.SoftmaxOp: "softmax", nm.LayerNormOp: "layer_norm",
    nm.RmsNormOp: "rms_norm", ew.ExpOp: "exp", ew.LogOp: "log", ew.RsqrtOp: "rsqrt", ew.SqrtOp: "sqrt",
    ew.AddOp: "add", ew.SiluOp: "silu", rd.CumsumOp: "cumsum", sh.ConcatOp: "cat", ix.GatherOp: "gather",
}  # fmt: skip


def test_torch_cuda_follows_the_autocast_lists():
    table, _ = TORCH_PRESETS["torch-cuda"]
    for op_class, names in TORCH_NAME.items():
        names = (names,) if isinstance(names, str) else names
        expected = "low" if CUDA_LOW & set(names) else "f32" if CUDA_F32 & set(names) else "promote"
        rule = table.lookup(op_class)
        assert (rule if rule is not None else "promote") == expected, op_class.name


@pytest.mark.parametrize(("preset", "low"), [("torch-cuda", "f16"), ("torch-cpu", "bf16")])
def test_torch_presets_default_to_the_device_autocast_dtype(preset, low):
    assert AutoMixedPrecisionPass(policy=preset).build_policy(resolve=None).low == low


def test_torch_cuda_reduces_sums_in_f32_but_means_as_they_come():
    b = GraphBuilder("f")
    h = b.matmul(b.input("x", [2, 4]), b.param("w", [4, 4]))
    b.output(b.reduce(h, kind="sum", axes=[1]), b.reduce(h, kind="mean", axes=[1]))
    module = amp(b.module(), policy="torch-cuda")
    kinds = {op.kind.data: element(op.result) for op in module.walk() if isinstance(op, rd.ReduceOp)}
    assert kinds == {"sum": f32, "mean": f16}


# Semantics -------------------------------------------------------------------------------


def non_data_operands(op: Operation) -> list:
    """`(producer, type)` of each operand of `op` that is not data."""
    return [(v.owner, v.type) for v, role in zip(op.operands, operand_roles(op)) if not role.is_data]


def snapshot(module: ModuleOp) -> list[tuple[Operation, list, list]]:
    """Each op with its result types and its operands that are not data."""
    return [(op, [r.type for r in op.results], non_data_operands(op)) for op in module.walk()]


@PROPERTY
@given(graphs(max_ops=12), st.sampled_from(LOW_POLICIES))
def test_random_graphs_keep_integers_indices_and_signatures(module, policy):
    """Integer, i1 and f64 values keep their types, non-data operands are never cast, the signature stays."""
    before = snapshot(module)
    program_casts = set(casts(module))
    signature = module.ops.first.function_type
    amp(module, policy=policy)
    assert module.ops.first.function_type == signature
    for op, result_types, non_data in before:
        for old, new in zip(result_types, (r.type for r in op.results)):
            if not isinstance(old, TensorType) or old.element_type not in (f32, f16, bf16):
                assert new == old, str(op)
        assert non_data_operands(op) == non_data, str(op)
    for cast in set(casts(module)) - program_casts:
        assert {element(cast.input), element(cast.result)} <= {f32, f16, bf16}


@PROPERTY
@given(graphs(max_ops=12))
def test_always_f32_leaves_random_graphs_unchanged(module):
    before = str(module)
    assert str(amp(module, policy="always-f32")) == before


@PROPERTY
@given(graphs(max_ops=12), st.sampled_from(POLICIES))
def test_fold_casts_finds_nothing_after_amp(module, policy):
    FoldCastsPass().apply(Context(), module)
    amp(module, policy=policy)
    after_amp = str(module)
    FoldCastsPass().apply(Context(), module)
    assert str(module) == after_amp


# Declared shapes --------------------------------------------------------------------------

DECLARED_LOOSER = """
func.func @f(%x: tensor<3xf32>, %d: tensor<?xf32>, %m: tensor<2x3xf32>)
    -> (tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>) {
  %a = mir.add %x, %d : (tensor<3xf32>, tensor<?xf32>) -> tensor<?xf32>
  %r = mir.reshape %m new_shape = [6] : (tensor<2x3xf32>) -> tensor<?xf32>
  %e = mir.expand %x target_shape = [2, 3] : (tensor<3xf32>) -> tensor<?x?xf32>
  func.return %a, %r, %e : tensor<?xf32>, tensor<?xf32>, tensor<?x?xf32>
}"""


@pytest.mark.parametrize("policy", [p for p in LOW_POLICIES if p in CLASS_POLICIES])
def test_values_keep_their_declared_shapes(policy):
    """Inference knows each result is static; the results keep saying `?` (issue: `func.return` broke)."""
    module = amp(parse_module(DECLARED_LOOSER), policy=policy)
    retyped = [op for op in module.walk() if isinstance(op, ew.AddOp | sh.ReshapeOp | sh.ExpandOp)]
    assert [fmt_shape(tensor_type(op.result).get_shape()) for op in retyped] == ["[?]", "[?]", "[?, ?]"]
    assert all(element(op.result) != f32 for op in retyped)  # these policies lower every class
    x = np.array([1.0, 2.0, 3.0], np.float32)
    outputs = run_function(module, "f", [x, x, np.arange(6, dtype=np.float32).reshape(2, 3)])
    assert [o.shape for o in outputs] == [(3,), (6,), (2, 3)]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=10), st.sampled_from(POLICIES))
def test_random_graphs_with_looser_declared_types_stay_valid(module, policy):
    """Returned values declared with `?` dims: AMP (then rlx-fold-casts) keeps them declared so."""
    loosen_returned(module)
    signature = module.ops.first.function_type
    inputs = inputs_for(module)
    with np.errstate(all="ignore"):
        before = run_function(module, None, inputs)
        amp(module, policy=policy)
        FoldCastsPass().apply(Context(), module)
        module.verify()
        after = run_function(module, None, inputs)
    assert module.ops.first.function_type == signature
    for got, want in zip(after, before, strict=True):
        assert got.shape == want.shape and got.dtype == want.dtype


# Error bounds: ops whose error stays proportional to the rounding of their inputs (no
# comparisons, rounding, integer casts or poles that turn a rounding into a jump).
WELL_CONDITIONED = [
    ew.AddOp, ew.MulOp, ew.SiluOp, ew.GeluOp, ew.TanhOp, ew.SigmoidOp, ct.MatmulOp, rd.SoftmaxOp,
    nm.RmsNormOp, sh.ReshapeOp, sh.TransposeOp, sh.ConcatOp, sh.NarrowOp, sh.ExpandOp, ix.GatherOp,
]  # fmt: skip

ERROR_BOUND = {"f16": 1e-2, "bf16": 8e-2}
"""Bound on max|amp - f32| / max(1, max|f32|) per output, by the lowest precision a policy uses:
about 20 roundings of that precision (2^-11, 2^-8). Measured maxima over 600 graphs of up to
16 ops: 1.2e-3 (f16) and 5.0e-3 (bf16)."""
LOWEST = {
    "always-f16": "f16", "auto-mixed-conservative": "f16", "auto-mixed": "f16", "auto-mixed-bf16": "bf16",
    "torch-cuda": "f16", "torch-cpu": "bf16",
}  # fmt: skip


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    """max|got - want| relative to the output's scale (at least 1, so near-zero outputs do not divide)."""
    want64 = want.astype(np.float64)
    scale = max(1.0, float(np.max(np.abs(want64)))) if want.size else 1.0
    return float(np.max(np.abs(got.astype(np.float64) - want64))) / scale if want.size else 0.0


def assert_within_bound(module: ModuleOp, inputs: Sequence[np.ndarray], policy: str, name=None) -> None:
    reference = run_function(module, name, inputs)
    amp(module, policy=policy)
    for got, want in zip(run_function(module, name, inputs), reference, strict=True):
        assert got.dtype == want.dtype
        if np.issubdtype(want.dtype, np.floating) and np.all(np.isfinite(want)):
            assert relative_error(got, want) <= ERROR_BOUND[LOWEST[policy]], policy


@PROPERTY
@given(graphs(max_ops=10, ops=WELL_CONDITIONED), st.sampled_from(sorted(LOWEST)))
def test_random_graphs_stay_within_the_policy_error_bound(module, policy):
    assert_within_bound(module, inputs_for(module), policy)



def test_amp_benchmark_smoke(capsys, monkeypatch):
    """benchmarks/amp.py runs end to end; always-f32 rows show no error, casts or byte change."""
    import importlib.util
    import sys
    from pathlib import Path

    path = Path(__file__).resolve().parents[2] / "benchmarks" / "amp.py"
    spec = importlib.util.spec_from_file_location("amp_benchmark", path)
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "amp_benchmark", bench)
    spec.loader.exec_module(bench)
    assert bench.main(["--layers", "1"]) == 0
    out = capsys.readouterr().out
    assert "### llama (1 layers)" in out and "### mlp + sce" in out
    rows = [line.split("|")[1:-1] for line in out.splitlines() if line.startswith("| ")]
    by_policy = {}
    for cells in rows:
        if cells[0].strip() != "policy":
            by_policy.setdefault(cells[0].strip(), []).append([c.strip() for c in cells])
    assert set(by_policy) >= {"always-f32", "auto-mixed", "torch-cuda", "torch-cpu"}
    for cells in by_policy["always-f32"]:
        assert cells[2:] == ["0.00e+00", "0.00e+00", "0 (0)", "1.00", "1.00"]
    for cells in by_policy["auto-mixed"]:
        assert 0 < float(cells[2]) < 1e-2 and float(cells[6]) < 0.6


@pytest.mark.parametrize("policy", ["always-f16", "auto-mixed-bf16"])
def test_ops_reading_complex_values_keep_their_types(policy):
    """complex_norm_sq_backward's g is tied to its complex<f32> operand: casting g alone
    would break the op (no policy casts complex values)."""
    b = GraphBuilder("f")
    z = b.cast(b.input("x", [3]), "complex<f32>")
    grad = b.complex_norm_sq_backward(z, b.input("g", [3]))
    b.output(b.add(b.complex_norm_sq(grad), b.input("y", [3])))
    module = b.module()
    amp(module, policy=policy)
    module.verify()
    (op,) = [op for op in module.walk() if op.name == "mir.complex_norm_sq_backward"]
    assert [str(tensor_type(v).element_type) for v in op.operands] == ["complex<f32>", "f32"]
