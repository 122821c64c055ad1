"""SSA dominance: the verifier rejects uses that their definition does not dominate,
at the use, in function bodies and in every region of our ops, and after passes."""

from __future__ import annotations

import pytest

from rlx_xdsl.context import make_context
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.dominance import first_non_dominated_use
from rlx_xdsl.ir.source import SourceError, parse_source

CTX = make_context()


def diagnostic(text: str) -> tuple[str, str | None]:
    with pytest.raises(SourceError) as info:
        parse_source(CTX, text, "t.mlir")
    d = info.value.diagnostic
    notes = [n.message for n in d.notes]
    return f"{d.pos.line}:{d.pos.col}: {d.message}", notes[0] if notes else None


SWAPPED = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %c = mir.add %b, %a : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %b = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %c : tensor<4xf32>
}
"""


def test_a_use_before_its_definition_is_rejected_at_the_use():
    assert diagnostic(SWAPPED) == (
        "2:3: operand #0 does not dominate this use",
        "operand #0 is defined at t.mlir:3:3",
    )


def test_a_use_of_an_op_by_itself_is_rejected():
    text = """\
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %b = mir.add %a, %b : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  func.return %b : tensor<4xf32>
}
"""
    assert diagnostic(text)[0] == "2:3: operand #1 does not dominate this use"


def test_a_use_before_its_definition_inside_a_region_is_rejected():
    text = """\
func.func @f(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %z = mir.add %y, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
    %y = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %z : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  func.return %r : tensor<4xf32>
}
"""
    assert diagnostic(text) == ("4:5: operand #0 does not dominate this use", "operand #0 is defined at t.mlir:5:5")


def test_values_of_a_region_are_not_visible_after_its_op():
    # Built in memory: an op after a region op uses a value defined inside the region.
    module, _ = parse_source(
        CTX,
        """\
func.func @f(%p: tensor<1xi1>, %a: tensor<4xf32>) -> tensor<4xf32> {
  %r = mir.if %p (%a) : (tensor<1xi1>, tensor<4xf32>) -> tensor<4xf32> {
  ^bb0(%x: tensor<4xf32>):
    %y = mir.neg %x : (tensor<4xf32>) -> tensor<4xf32>
    mir.yield %y : tensor<4xf32>
  } else {
  ^bb0(%x: tensor<4xf32>):
    mir.yield %x : tensor<4xf32>
  }
  %z = mir.neg %a : (tensor<4xf32>) -> tensor<4xf32>
  func.return %z : tensor<4xf32>
}
""",
        "t.mlir",
    )
    func = module.ops.first
    if_op, neg, _ = list(func.body.block.ops)
    inner = if_op.regions[0].block.first_op
    neg.operands[0] = inner.results[0]
    bad = first_non_dominated_use(module)
    assert bad is not None and bad.user is neg and bad.index == 0
    with pytest.raises(OpError, match="operand #0 does not dominate this use"):
        verify_located(module)


def test_module_bodies_are_graph_regions():
    module, _ = parse_source(CTX, '"test.op"(%v) : (i32) -> ()\n%v = "test.op"() : () -> i32\n', "t.mlir")
    assert first_non_dominated_use(module) is None


def test_valid_ir_has_no_bad_use():
    module, _ = parse_source(CTX, SWAPPED.replace("%c = mir.add %b", "%c = mir.add %a"), "t.mlir")
    assert first_non_dominated_use(module) is None


def test_a_pass_that_breaks_dominance_is_caught_by_verify_after():
    from rlx_xdsl.transforms.pipeline import verify_after

    module, _ = parse_source(CTX, SWAPPED.replace("%c = mir.add %b", "%c = mir.add %a"), "t.mlir")
    func = module.ops.first
    add, neg, _ = list(func.body.block.ops)
    add.operands[1] = neg.results[0]  # what a buggy pass could do
    with pytest.raises(OpError, match="operand #1 does not dominate this use") as info:
        verify_after(None, module)
    assert info.value.op is add
