"""The `lir` dialect: its attributes, the `lir.plan` op, and the verifier that proves a plan."""

from pathlib import Path

import pytest
from xdsl.dialects.builtin import ArrayAttr
from xdsl.traits import HasParent, Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.conversions.mir_to_lir.plan_memory import Options, plan_function
from rlx_xdsl.dialects.lir import LIR, plan_of
from rlx_xdsl.dialects.lir.attrs import (
    ExternalAttr,
    Phase,
    PhaseAttr,
    SlotAttr,
    ViewAttr,
)
from rlx_xdsl.dialects.lir.liveness import PlanError
from rlx_xdsl.dialects.lir.names import ValueNames
from rlx_xdsl.dialects.lir.plan import PlanOp
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.testing.expected_errors import expected_error_test

LIT = Path(__file__).parents[3] / "lit_tests/dialects/lir"

test_each_invalid_plan_chunk_reports_its_error = expected_error_test(LIT / "invalid-plan.mlir")
test_each_invalid_attribute_chunk_reports_its_error = expected_error_test(LIT / "invalid-attrs.mlir")


def test_attributes_print_their_custom_syntax():
    assert str(SlotAttr(64, 128)) == "#lir.slot<offset = 64, size = 128>"
    assert str(SlotAttr(64, 128, in_place=True)) == "#lir.slot<offset = 64, size = 128, in_place>"
    assert str(ViewAttr(96, 32, 32)) == "#lir.view<offset = 96, size = 32, byte_offset = 32>"
    assert str(ExternalAttr()) == "#lir.external"
    assert str(PhaseAttr(Phase.EPILOGUE)) == "#lir.phase<epilogue>"
    slot = SlotAttr(64, 128, in_place=True)
    assert (slot.start, slot.end, slot.writes_in_place) == (64, 192, True)


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: SlotAttr(-1, 4), "#lir.slot offset must be >= 0, got -1"),
        (lambda: SlotAttr(0, -4), "#lir.slot size must be >= 0, got -4"),
        (lambda: ViewAttr(0, 4, 8), "#lir.view byte_offset 8 exceeds offset 0"),
    ],
)
def test_attributes_reject_bad_parameters_when_built(build, message):
    with pytest.raises(VerifyException, match=message):
        build()


def test_the_plan_op_is_kept_by_dce_and_lives_in_functions():
    assert not PlanOp.has_trait(Pure)  # a result-less Pure op would be erased as dead
    assert PlanOp.get_trait(HasParent) is not None
    assert LIR.name == "lir" and PlanOp in LIR.operations


def test_plan_op_constructor_and_printing():
    op = PlanOp(arena_bytes=128, naive_bytes=256, lower_bound_bytes=128, alignment=64, strategy="best-fit")
    assert op.arena_bytes.value.data == 128 and op.strategy.data == "best-fit"
    text = str(op)
    assert text == (
        'lir.plan arena_bytes = 128 naive_bytes = 256 lower_bound_bytes = 128 alignment = 64 strategy = "best-fit"'
    )
    bare = PlanOp(arena_bytes=0, naive_bytes=0, lower_bound_bytes=0, alignment=1)
    assert "strategy" not in str(bare)


def planned_chain():
    """x -> exp -> neg -> add(., x): neg writes in place over exp's buffer."""
    b = GraphBuilder("f")
    x = b.input("x", [16])
    b.output(b.add(b.neg(b.exp(x)), x))
    module = b.module()
    plan_function(module.ops.first, Options())
    return module


def test_the_planner_output_is_proved():
    module = planned_chain()
    verify_located(module)
    plan = plan_of(module.ops.first)
    assert plan is not None and plan.arena_bytes.value.data == 128


def test_moving_a_slot_onto_a_live_buffer_is_a_located_error_naming_both_values():
    module = planned_chain()
    function = module.ops.first
    exp, neg, add = list(function.body.block.ops)[1:4]
    x_slot = function.arg_attrs.data[0].data["lir.slot"]
    exp.attributes["lir.slot"] = SlotAttr(x_slot.start, 64)  # onto the input x, which lives throughout
    with pytest.raises(OpError) as caught:
        verify_located(module)
    assert caught.value.op is exp  # located at the op defining the value, not at lir.plan
    assert "%0 [0, 64) overlaps %x [0, 64) while both are live at step 1" in caught.value.message
    assert isinstance(caught.value, PlanError) and isinstance(caught.value, VerifyException)


def test_a_plan_made_stale_by_a_new_op_is_rejected():
    module = planned_chain()
    block = module.ops.first.body.block
    from rlx_xdsl.dialects.mir.elementwise import TanhOp

    block.insert_op_before(TanhOp(block.args[0]), block.last_op)
    with pytest.raises(PlanError, match="has no placement .*re-run rlx-plan-memory"):
        verify_located(module)


def test_multi_result_placements_are_one_per_result():
    b = GraphBuilder("f")
    values, indices = b.topk(b.input("x", [2, 8]), k=3)
    b.output(values, indices)
    module = b.module()
    plan_function(module.ops.first, Options())
    topk = list(module.ops.first.body.block.ops)[1]
    slots = topk.attributes["lir.slot"]
    assert isinstance(slots, ArrayAttr) and [s.size.data for s in slots.data] == [24, 48]
    verify_located(module)


def test_value_names_follow_the_printer():
    module = parse_module("""
    func.func @f(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
      %0 = mir.add %x, %y : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
      %x_1 = mir.exp %0 : (tensor<4xf32>) -> tensor<4xf32>
      func.return %x_1 : tensor<4xf32>
    }""")
    function = module.ops.first
    names = ValueNames(function)
    add, exp = list(function.body.block.ops)[:2]
    assert [names[v] for v in function.body.block.args] == ["%x", "%y"]
    assert names[add.results[0]] == "%0"
    assert names[exp.results[0]] == "%x_1"
