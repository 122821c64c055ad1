"""The fusion report: RLX's fields and miss reasons (and ours), said in this project's words;
source locations and HIR labels; the MIR baseline of a pipeline that lowers HIR."""

import json
import re
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import AddOp
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.tools.rlx_opt import run_opt
from rlx_xdsl.transforms.fusion.report import DESCRIPTIONS, HINTS, FusionReport, MissReason
from rlx_xdsl.transforms.fusion.residual_norm import FuseResidualRmsNormPass
from rlx_xdsl.transforms.fusion.shared_input_matmul import FuseSharedInputMatmulPass
from rlx_xdsl.transforms.fusion.swiglu import FuseSwigluPass

RUST = re.compile(r"Hir(Op|Module)::|RLX_FUSION_REPORT|inspect_pipeline|\{ \w+: |\(\w+\)|[a-z]+_ffn\b|linear\+bias")
"""What RLX's hints and `Debug` reasons look like; none of it may reach our report."""


def swiglu_ffn(gate_first: bool = False):
    b = GraphBuilder("report")
    x = b.input("x", [4, 16])
    up_w, gate_w, down_w = b.param("up", [16, 8]), b.param("gate", [16, 8]), b.param("down", [8, 16])
    if gate_first:
        gate, up = b.matmul(x, gate_w), b.matmul(x, up_w)
    else:
        up, gate = b.matmul(x, up_w), b.matmul(x, gate_w)
    b.output(b.matmul(b.mul(b.silu(gate), up), down_w))
    return b.module()


def test_report_counts_fused_ops():
    """RLX's `report_counts_fused_ops`: shared-input matmul then fuse-swiglu gives one fused_swiglu."""
    module = swiglu_ffn()
    before = module.clone()
    FuseSharedInputMatmulPass().apply(Context(), module)
    FuseSwigluPass().apply(Context(), module)
    report = FusionReport.analyze(before, module)
    assert report.fused_swiglu == 1
    assert report.nodes_after < report.nodes_before
    assert (report.nodes_before, report.nodes_after) == (9, 8)
    assert (report.matmul_before, report.matmul_after) == (3, 2)


def test_report_flags_gate_before_up():
    """RLX's `report_flags_gate_before_up` (a scan of the unfused graph)."""
    report = FusionReport.scan(swiglu_ffn(gate_first=True))
    assert report.missed_swiglu() >= 1
    assert any(m.reason == MissReason("SwigluGateBeforeUp") for m in report.missed)


MISSES = """
func.func @misses(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b1: tensor<8xf32>, %b2: tensor<1x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = mir.add %1, %b2 : (tensor<4x8xf32>, tensor<1x8xf32>) -> tensor<4x8xf32>
  %3 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %4 = mir.add %b1, %3 : (tensor<8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = mir.exp %4 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %6 = mir.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %7 = mir.matmul %y, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %8 = mir.silu %7 : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %9 = mir.mul %0, %8 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %0, %2, %5, %9, %6, %0 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_every_miss_reason_in_words_with_a_hint_and_the_source_line():
    module, _ = parse_source(make_context(), MISSES, "m.mlir")
    report = FusionReport.scan(module)
    found = {(m.pattern, m.reason.kind, str(m.reason), m.location) for m in report.missed}
    assert found == {
        ("matmul_bias_act", "MultiConsumer", "the product has 3 users", "m.mlir:3:3"),  # %9, returned twice
        ("matmul_bias_act", "BiasRankTooHigh", "a bias of rank 2", "m.mlir:4:3"),
        ("matmul_bias_act", "UnsupportedEpilogueActivation", "activation exp is not folded", "m.mlir:6:3"),
        ("shared_input_matmul", "SharedMatmulCount", "3 matmuls share this input", "m.mlir:3:3"),
        ("shared_input_matmul", "NotFused", "two matmuls of one input are left apart", "m.mlir:9:3"),
        ("swiglu", "SwigluNotSharedInput", "gate and up read different inputs", "m.mlir:12:3"),
    }
    for miss in report.missed:
        assert miss.hint == HINTS[miss.reason.kind]
    assert report.missed_matmul_bias_act() == 3  # %6 (only returned) and %7 (feeds silu) have no bias
    assert report.missed_shared_matmul() == 2
    assert report.missed_swiglu() == 1


def test_a_bias_free_layer_is_no_matmul_bias_act_miss():
    """A matmul no add follows has no bias to fuse (RLX reports it as `NonAddBiasConsumer`): in a
    bias-free LLaMA the only matmul_bias_act misses are the matmuls followed by a residual add."""
    module = build_llama(2)
    followed_by_add = [
        op for op in module.walk()
        if isinstance(op, MatmulOp) and any(isinstance(use.operation, AddOp) for use in op.result.uses)
    ]
    missed = [m for m in FusionReport.scan(module).missed if m.pattern == "matmul_bias_act"]
    assert [m.op for m in missed] == followed_by_add
    assert {m.reason.kind for m in missed} == {"ResidualAdd"}
    assert "no bias" not in str(FusionReport.scan(module))


def test_no_hint_or_reason_speaks_rust():
    """RLX's hints name its Rust API and environment (`HirModule::linear_fused`,
    `RLX_FUSION_REPORT=1`, `BiasRankTooHigh { rank: 3 }`); ours name passes, targets and HIR ops."""
    said = [*HINTS.values(), *(d.format(rank=3, count=2, activation="gelu_approx") for d in DESCRIPTIONS.values())]
    assert [text for text in said if RUST.search(text)] == []
    assert set(HINTS) == set(DESCRIPTIONS)


def test_text_report():
    module, _ = parse_source(make_context(), MISSES, "m.mlir")
    lines = str(FusionReport.scan(module)).splitlines()
    assert lines[0] == "fusion report:"
    assert lines[1] == (
        "  nodes=15→15 matmul=5→5 fused_mm_act=0 fused_swiglu=0 fused_attention_block=0 fused_residual_norm=0 "
        "fused_mm_epilogue=0 elementwise_region=0 transform_region=0 batch_region=0 fk_prologue=0 missed_mm_act=3 "
        "missed_swiglu=1 missed_shared_mm=2 missed_residual_norm=0"
    )
    assert lines[2] == "  missed patterns:"
    assert f"    matmul_bias_act @ m.mlir:4:3 — a bias of rank 2 → {HINTS['BiasRankTooHigh']}" in lines
    assert f"    swiglu @ m.mlir:12:3 — gate and up read different inputs → {HINTS['SwigluNotSharedInput']}" in lines


RESIDUALS = """
func.func @residuals(%x: tensor<4x8xf32>, %w: tensor<8x8xf32>, %g: tensor<8xf32>, %h: tensor<4x8xbf16>) -> (tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mir.add %x, %0 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = mir.add %x, %h : (tensor<4x8xf32>, tensor<4x8xbf16>) -> tensor<4x8xf32>
  %3 = mir.rms_norm %2, %g, %g axis = -1 eps = 1.000000e-06 : (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  func.return %1, %3 : tensor<4x8xf32>, tensor<4x8xf32>
}
"""


def test_a_residual_add_is_not_a_missed_bias_and_an_unfused_residual_norm_says_why():
    module, _ = parse_source(make_context(), RESIDUALS, "r.mlir")
    found = {(m.pattern, m.reason.kind, m.location) for m in FusionReport.scan(module).missed}
    assert found == {
        ("matmul_bias_act", "ResidualAdd", "r.mlir:3:3"),
        ("residual_norm", "SumDtypesDiffer", "r.mlir:6:3"),
    }


def test_a_shared_residual_sum_fused_into_its_norm_is_no_miss():
    """The residual stream: the matmul's add feeds the norm and the output; once the norm keeps
    the sum, neither the matmul nor the norm is a miss, and the summary counts the fused norm."""
    b = GraphBuilder("f")
    x, w, g = b.input("x", [4, 8]), b.param("w", [8, 8]), b.param("g", [8])
    total = b.add(x, b.matmul(x, w))
    b.output(b.add(b.rms_norm(total, g, g), total))
    module = b.module()
    unfused = FusionReport.scan(module)
    assert {(m.pattern, m.reason.kind) for m in unfused.missed} == {
        ("matmul_bias_act", "ResidualAdd"), ("residual_norm", "NormNotFused"),
    }  # fmt: skip
    before = module.clone()
    FuseResidualRmsNormPass().apply(Context(), module)
    report = FusionReport.analyze(before, module)
    assert report.missed == [] and report.fused_residual_rms_norm == 1
    assert " fused_residual_norm=1 " in report.summary_line()


def test_a_miss_names_its_hir_block_label():
    b = GraphBuilder("f")
    x, w = b.input("x", [2, 4]), b.param("w", [4, 4])
    hir = b.emitter.labelled("layers.0.ffn")
    hir.location = NameLoc(StringAttr("layers.0.ffn"), FileLineColLoc(StringAttr("model.py"), IntAttr(12), IntAttr(5)))
    product = hir.mir.matmul(x, w)
    b.output(b.neg(product), product)
    (miss,) = FusionReport.scan(b.module()).missed
    assert miss.label == "layers.0.ffn" and miss.location == "model.py:12:5"
    assert str(miss) == (
        f"matmul_bias_act @ model.py:12:5 (layers.0.ffn) — the product has 2 users → {HINTS['MultiConsumer']}"
    )


def test_json_form_has_every_counter_and_miss():
    module, _ = parse_source(make_context(), MISSES, "m.mlir")
    data = FusionReport.scan(module).to_json()
    assert data["nodes_before"] == 15 and data["missed_shared_matmul"] == 2
    assert data["summary"].startswith("nodes=15→15")
    first = data["missed"][0]
    assert set(first) == {"pattern", "op", "location", "label", "reason", "detail", "hint"}
    rank = next(m for m in data["missed"] if m["reason"] == "BiasRankTooHigh")
    assert rank["detail"] == {"rank": 2} and rank["op"] == "mir.matmul"
    activation = next(m for m in data["missed"] if m["reason"] == "UnsupportedEpilogueActivation")
    assert activation["detail"] == {"activation": "exp"}


@pytest.mark.parametrize("form", ["text", "json"])
def test_rlx_opt_prints_the_report_to_stderr(tmp_path, capsys, form):
    path = tmp_path / "m.mlir"
    path.write_text(MISSES)
    flag = "--fusion-report" if form == "text" else "--fusion-report=json"
    status = run_opt([str(path), "-p", "rlx-fusion-pipeline", flag, "-o", str(tmp_path / "out.mlir")])
    assert status == 0
    err = capsys.readouterr().err
    if form == "json":
        data = json.loads(err)
        assert data["nodes_before"] == 15 and data["matmul_after"] < data["matmul_before"] == 5
    else:
        assert err.startswith("fusion report:\n  nodes=15→")


LLAMA_HIR = Path(__file__).parents[3] / "examples/llama_hir.mlir"


def test_before_counts_the_mir_that_rlx_lower_hir_produces(tmp_path, capsys):
    """`rlx-lower-hir` in the pipeline: "before" is the lowered MIR, as if lowered first."""
    out = tmp_path / "mir.mlir"
    assert run_opt([str(LLAMA_HIR), "-p", "rlx-lower-hir{policy=fusable}", "-o", str(out)]) == 0
    capsys.readouterr()
    assert run_opt([str(out), "-p", "rlx-fusion-pipeline", "--fusion-report=json", "-o", str(tmp_path / "a")]) == 0
    lowered_first = json.loads(capsys.readouterr().err)
    pipeline = "rlx-lower-hir{policy=fusable},rlx-fusion-pipeline"
    assert run_opt([str(LLAMA_HIR), "-p", pipeline, "--fusion-report=json", "-o", str(tmp_path / "b")]) == 0
    in_one = json.loads(capsys.readouterr().err)
    assert in_one["nodes_before"] == lowered_first["nodes_before"] > in_one["nodes_after"]
    assert in_one["matmul_before"] == lowered_first["matmul_before"] > 0
    assert in_one["fused_attention_block"] == 2
