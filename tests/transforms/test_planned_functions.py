"""Passes refuse planned (LIR) functions up front unless they keep plans valid (`pipeline.KeepsPlansValid`)."""

import pytest
from xdsl.passes import ModulePass

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass
from rlx_xdsl.transforms.pipeline import (
    KeepsPlansValid,
    PassFailure,
    parse_pipeline,
    run_pass,
    verify_after,
)

GRAPH = """
func.func @f(%x: tensor<2x4xf32>, %w: tensor<4x4xf32>) -> tensor<2x4xf32> {
  %zero = mir.constant dense<0.0> : tensor<2x4xf32>
  %a = mir.add %x, %zero : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  %dead = mir.exp %a : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %b = mir.matmul %a, %w : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
  %c = mir.mul %a, %b : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  func.return %c : tensor<2x4xf32>
}
"""
"""Something for most passes to do: a fold, a dead op, a matmul, an elementwise chain."""

REQUIRED_OPTIONS = {"rlx-grad": "{func=f}", "rlx-jvp": "{func=f}", "rlx-hvp": "{func=f}", "rlx-train-step": "{func=f}", "rlx-vmap": "{func=f batched=x size=2}", "rlx-amp": "{policy=always-f16}", "rlx-insert-qdq": "{calibration=calibration.json}"}


def planned():
    module = parse_module(GRAPH)
    PlanMemoryPass().apply(make_context(), module)
    module.verify()
    return module


def make_pass(name: str) -> ModulePass:
    (pass_,) = parse_pipeline(name + REQUIRED_OPTIONS.get(name, ""), get_all_passes()).passes
    return pass_


KEEPERS = sorted(name for name, load in get_all_passes().items() if issubclass(load(), KeepsPlansValid))
REFUSING = sorted(set(get_all_passes()) - set(KEEPERS))


def test_only_the_planner_and_the_lowering_to_linalg_keep_plans_valid():
    """Marking a pass is a claim that `test_a_pass_keeping_plans_leaves_a_valid_function` checks."""
    assert KEEPERS == ["rlx-convert-mir-to-linalg", "rlx-plan-memory"]


@pytest.mark.parametrize("name", REFUSING)
def test_every_other_pass_refuses_a_planned_function_before_touching_it(name):
    pass_ = make_pass(name)
    module = planned()
    before = print_ir(module)
    with pytest.raises(PassFailure) as failure:
        run_pass(pass_, make_context(), module, module)
    assert isinstance(failure.value.cause, OpError)
    assert failure.value.op is plan_of(module.ops.first)  # located at the plan
    assert str(failure.value.cause) == (
        f"{name} cannot run on a planned function (@f has an lir.plan); run it before rlx-plan-memory"
    )
    assert print_ir(module) == before


@pytest.mark.parametrize("name", KEEPERS)
def test_a_pass_keeping_plans_leaves_a_valid_function(name):
    module = planned()
    pass_ = make_pass(name)
    assert run_pass(pass_, make_context(), module, module)
    verify_after(pass_, module)


def test_the_refused_passes_would_break_the_plan():
    """What the refusal prevents: the after-pass verifier's "re-run rlx-plan-memory", far from the cause."""
    for pass_ in (DeadCodeEliminationPass(), AutoMixedPrecisionPass(policy="always-f16")):
        module = planned()
        pass_.apply(make_context(), module)
        with pytest.raises(OpError):
            module.verify()


def test_an_unplanned_function_is_not_refused():
    module = parse_module(GRAPH)
    assert run_pass(DeadCodeEliminationPass(), make_context(), module, module)
    assert "mir.exp" not in print_ir(module)
