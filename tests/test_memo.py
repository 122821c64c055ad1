"""The compile-time memos change nothing but time: the same output with and without them,
and nothing they remember can hide a verifier error or outlive its bounds."""

from __future__ import annotations

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ModuleOp, TensorType, f16, f32, i64
from xdsl.ir import Operation
from xdsl.irdl import irdl_op_definition, result_def, traits_def
from xdsl.rewriter import Rewriter
from xdsl.traits import ConstantLike, Pure

from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.base import RlxOperation, i64_array
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.locations import LocatingParser
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.shapes import tensor
from rlx_xdsl.support import memo
from rlx_xdsl.support.memo import BoundedMemo, without_memos
from rlx_xdsl.testing.corpus import lit_inputs
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.tools.rlx_opt import run_opt

ROOT = Path(__file__).resolve().parents[1]

INFERENCE = (
    "rlx-specialize{shapes=x=1x16x64,cos=16x8,sin=16x8},rlx-canonicalize,rlx-dce,"
    "rlx-amp{policy=auto-mixed},rlx-fold-casts,rlx-plan-memory"
)


def rlx_opt(capsys, *args: str) -> tuple[int, str, str]:
    status = run_opt(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def with_and_without_memos(capsys, *args: str) -> tuple[tuple, tuple]:
    with_memos = rlx_opt(capsys, *args)
    with without_memos():
        assert not memo.enabled()
        plain = rlx_opt(capsys, *args)
    assert memo.enabled()
    return with_memos, plain


# The same output ---------------------------------------------------------------------


@pytest.fixture(scope="module")
def graphs(tmp_path_factory):
    directory = tmp_path_factory.mktemp("graphs")
    mir, hir = directory / "llama.mlir", directory / "llama_hir.mlir"
    mir.write_text(print_ir(build_llama(2)))
    hir.write_text(print_ir(build_llama_hir(2)))
    return mir, hir


@pytest.mark.parametrize(
    "extra",
    [[], ["--print-op-generic", "--print-debuginfo"], ["-p", INFERENCE], ["-p", "rlx-amp{policy=always-f16},rlx-dce"]],
    ids=["roundtrip", "generic", "inference", "always-f16"],
)
def test_llama_prints_the_same_with_and_without_memos(capsys, graphs, extra):
    mir, _ = graphs
    with_memos, plain = with_and_without_memos(capsys, str(mir), *extra)
    assert with_memos == plain
    assert with_memos[0] == 0 and len(with_memos[1]) > 5_000


def test_hir_llama_lowers_to_the_same_text_with_and_without_memos(capsys, graphs):
    _, hir = graphs
    with_memos, plain = with_and_without_memos(capsys, str(hir), "-p", "rlx-lower-hir," + INFERENCE)
    assert with_memos == plain and with_memos[0] == 0


@pytest.mark.parametrize("path", lit_inputs(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_lit_input_reads_and_prints_the_same_with_and_without_memos(capsys, path):
    """Valid chunks print the same text, invalid ones report the same diagnostics."""
    with_memos, plain = with_and_without_memos(capsys, str(path), "--split-input-file", "--allow-unregistered-dialect")
    assert with_memos == plain


# What the memos share ------------------------------------------------------------------

TWO_OPS = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = mir.relu %a : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = mir.neg %0 : (tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %1 : tensor<2x3xf32>
}
"""


def parse(text: str) -> ModuleOp:
    return LocatingParser(make_context(), text, "t.mlir").parse_module()


def types_of(module: ModuleOp) -> list:
    return [r.type for op in module.walk() for r in op.results]


def test_a_parse_shares_one_attribute_per_type_spelling():
    first, second = types_of(parse(TWO_OPS))
    assert first == second == TensorType(f32, [2, 3])
    assert first is second
    with without_memos():
        first, second = types_of(parse(TWO_OPS))
    assert first == second and first is not second  # what the memo shares, a plain parse builds twice


def test_the_type_memo_lives_as_long_as_its_parser():
    parser = LocatingParser(make_context(), TWO_OPS, "t.mlir")
    assert parser._types == {}
    parser.parse_module()
    assert list(parser._types) == ["tensor<2x3xf32>"]
    assert LocatingParser(make_context(), TWO_OPS, "t.mlir")._types == {}


def test_inference_builds_each_tensor_type_once():
    assert tensor(f16, [4, 8]) is tensor(f16, (4, 8))
    with without_memos():
        assert tensor(f16, [4, 8]) is not tensor(f16, [4, 8])


def test_bounded_memo_forgets_when_full_and_skips_unhashable_keys():
    m: BoundedMemo[int] = BoundedMemo(limit=2)
    m.put("a", 1)
    m.put("b", 2)
    assert (m.get("a"), m.get("b")) == (1, 2)
    m.put("c", 3)  # full: everything before is forgotten
    assert (m.get("a"), m.get("b"), m.get("c")) == (None, None, 3)
    assert m.put([1], 5) == 5  # an unhashable key: handed back, not remembered
    assert m.get([1]) is None and m.get("c") == 3


# Verification still sees every change --------------------------------------------------

LAYERS = """\
func.func @f(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = mir.transpose %a perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %1 = mir.transpose %a perm = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %2 = mir.add %0, %1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  func.return %2 : tensor<3x2xf32>
}
"""


def ops_named(module: ModuleOp, name: str) -> list[Operation]:
    return [op for op in module.walk() if op.name == name]


def test_a_result_type_changed_after_verification_is_caught():
    module = parse(LAYERS)
    verify_located(module)
    _, second = ops_named(module, "mir.transpose")
    Rewriter.replace_value_with_new_type(second.results[0], TensorType(f32, [2, 3]))
    with pytest.raises(OpError) as info:
        verify_located(module)
    assert info.value.op is second
    assert "inferred result type tensor<3x2xf32> does not match declared type tensor<2x3xf32>" in info.value.message


def test_a_property_changed_after_verification_is_caught():
    module = parse(LAYERS)
    verify_located(module)
    first, _ = ops_named(module, "mir.transpose")
    first.properties["perm"] = i64_array([0, 1])  # the identity: the result would stay 2x3
    with pytest.raises(OpError) as info:
        verify_located(module)
    assert info.value.op is first


def test_an_operand_type_changed_after_verification_is_caught():
    module = parse(LAYERS)
    verify_located(module)
    add = ops_named(module, "mir.add")[0]
    first, _ = ops_named(module, "mir.transpose")
    Rewriter.replace_value_with_new_type(first.results[0], TensorType(i64, [3, 2]))
    with pytest.raises(OpError) as info:
        verify_located(module)
    assert info.value.op in (first, add)


# Trait lookups -----------------------------------------------------------------------


@irdl_op_definition
class TraitProbeOp(RlxOperation):
    name = "test.trait_probe"
    out = result_def(TensorType)
    traits = traits_def(Pure())


def test_trait_lookups_follow_traits_added_later():
    assert TraitProbeOp.has_trait(Pure)
    assert TraitProbeOp.get_trait(ConstantLike) is None
    TraitProbeOp.traits.add_trait(ConstantLike())
    assert isinstance(TraitProbeOp.get_trait(ConstantLike), ConstantLike)
    assert TraitProbeOp.get_trait(ConstantLike()) is not None  # by value, as upstream
