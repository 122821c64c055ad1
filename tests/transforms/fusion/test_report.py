"""The fusion report: RLX's fields, miss reasons and hints; source locations and HIR labels."""

import json

import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import FileLineColLoc, IntAttr, NameLoc, StringAttr

from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.source import parse_source
from rlx_xdsl.tools.rlx_opt import run_opt
from rlx_xdsl.transforms.fusion.report import FusionReport, MissReason
from rlx_xdsl.transforms.fusion.shared_input_matmul import FuseSharedInputMatmulPass
from rlx_xdsl.transforms.fusion.swiglu import FuseSwigluPass

# RLX's `fusion_hint` strings, copied from the seed (rlx-fusion 0.2.6 fusion_report.rs).
RLX_HINTS = {
    "MultiConsumer": "single-consumer chain required — clone input or use HirOp::LinearFused",
    "NonAddBiasConsumer": "use linear+bias or HirModule::linear_fused",
    "BiasRankTooHigh": "bias must be rank-1",
    "UnsupportedEpilogueActivation": "FuseMatMulBiasAct supports Gelu/Silu only",
    "SharedMatmulCount": "use shared_linear_pair or HirOp::SwiGLU",
    "SwigluGateBeforeUp": "pass up_w before gate_w in swiglu_ffn",
    "SwigluNotSharedInput": "gate and up must share the same input",
    "NotFused": "check inspect_pipeline / RLX_FUSION_REPORT=1",
}


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
func.func @misses(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>, %w: tensor<8x8xf32>, %b1: tensor<8xf32>, %b2: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %0 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %1 = mir.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %2 = mir.add %1, %b2 : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
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


def test_every_miss_reason_with_rlx_s_hint_and_the_source_line():
    module, _ = parse_source(make_context(), MISSES, "m.mlir")
    report = FusionReport.scan(module)
    found = {(m.pattern, str(m.reason), m.location) for m in report.missed}
    assert found == {
        ("matmul_bias_act", "MultiConsumer", "m.mlir:3:3"),  # %0: used by %9 and returned twice
        ("matmul_bias_act", "BiasRankTooHigh { rank: 2 }", "m.mlir:4:3"),
        ("matmul_bias_act", "UnsupportedEpilogueActivation(Exp)", "m.mlir:6:3"),
        ("matmul_bias_act", "NonAddBiasConsumer", "m.mlir:9:3"),  # %6: only returned
        ("matmul_bias_act", "NonAddBiasConsumer", "m.mlir:10:3"),  # %7: feeds silu
        ("shared_input_matmul", "SharedMatmulCount { count: 3 }", "m.mlir:3:3"),
        ("shared_input_matmul", "NotFused", "m.mlir:9:3"),
        ("swiglu", "SwigluNotSharedInput", "m.mlir:12:3"),
    }
    for miss in report.missed:
        assert miss.hint == RLX_HINTS[miss.reason.kind]
    assert report.missed_matmul_bias_act() == 5
    assert report.missed_shared_matmul() == 2
    assert report.missed_swiglu() == 1


def test_text_follows_rlx_s_display():
    module, _ = parse_source(make_context(), MISSES, "m.mlir")
    lines = str(FusionReport.scan(module)).splitlines()
    assert lines[0] == "fusion report:"
    assert lines[1] == (
        "  nodes=15→15 matmul=5→5 fused_mm_act=0 fused_swiglu=0 elementwise_region=0 transform_region=0 "
        "batch_region=0 fk_prologue=0 missed_mm_act=5 missed_swiglu=1 missed_shared_mm=2"
    )
    assert lines[2] == "  missed patterns:"
    assert "    matmul_bias_act @ m.mlir:4:3 — BiasRankTooHigh { rank: 2 } → bias must be rank-1" in lines
    assert "    swiglu @ m.mlir:12:3 — SwigluNotSharedInput → gate and up must share the same input" in lines


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
        "matmul_bias_act @ model.py:12:5 (layers.0.ffn) — MultiConsumer → "
        "single-consumer chain required — clone input or use HirOp::LinearFused"
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
