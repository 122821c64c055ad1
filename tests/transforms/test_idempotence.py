"""Every pass is idempotent: running it twice leaves the IR exactly as running it once.

The passes come from the pass registry, so a pass is covered as soon as it is
registered. A pass changes only what it is for; removing dead code is `rlx-dce`'s
job (`transforms/rewriting.py`). The only exclusion is `rlx-grad`, which adds a
function: a second run is a located error, not a silent second copy.
"""

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

import rlx_xdsl
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.dialects import hir
from rlx_xdsl.dialects.mir.contraction import MatmulOp
from rlx_xdsl.dialects.mir.elementwise import SiluOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.testing.graphgen import PATTERNS, graphs
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.testing.training import build_llama_training
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline

NOT_IDEMPOTENT = {
    "rlx-grad": "adds @F_grad; running it again on the same F is an error (test_grad_twice_is_a_located_error)",
    "rlx-train-step": "adds @F_train_step; running it again on the same F is an error (lit_tests/autodiff/train-step-errors.mlir)",
}
"""Passes that cannot be idempotent, and why."""

CALIBRATION = Path(__file__).parent / "inputs" / "calibration-arg0.json"

REQUIRED_OPTIONS = {"rlx-grad": "func=main", "rlx-jvp": "func=main wrt=0", "rlx-hvp": "func=main wrt=0", "rlx-vmap": "func=main batched=0 size=2", "rlx-insert-qdq": f"calibration={CALIBRATION}"}
"""Options a pass cannot run without (the calibration names `arg0`, which random graphs have)."""

VARIANTS = (
    "rlx-amp{policy=auto-mixed}",
    "rlx-amp{policy=torch-cpu}",
    "rlx-fusion-pipeline{target=best}",
    "rlx-fusion-pipeline{target=metal}",
    "rlx-lower-hir{policy=fusable}",
)
"""Options that make a pass do different work than its defaults do."""


def make_pass(spec: str) -> ModulePass:
    (pass_,) = parse_pipeline(spec, get_all_passes()).passes
    return pass_


def specs() -> list[str]:
    registered = [name for name in sorted(get_all_passes()) if name not in NOT_IDEMPOTENT]
    return [*(f"{name}{{{REQUIRED_OPTIONS[name]}}}" if name in REQUIRED_OPTIONS else name for name in registered), *VARIANTS]


SPECS = specs()


def once_and_twice(pass_: ModulePass, original: ModuleOp) -> tuple[str, str] | None:
    """The IR after one run and after a second one; None when the pass refuses the input."""
    module = original.clone()
    try:
        pass_.apply(make_context(), module)
    except OpError:  # a located refusal (an HIR op the linalg lowering has no rule for, ...)
        return None
    module.verify()
    once = print_ir(module)
    pass_.apply(make_context(), module)
    return once, print_ir(module)


def assert_idempotent(module: ModuleOp) -> None:
    for spec in SPECS:
        result = once_and_twice(make_pass(spec), module)
        if result is not None:
            once, twice = result
            assert twice == once, f"{spec} changed its own output:\n{once}\n---- second run ----\n{twice}"


def test_every_registered_pass_is_covered():
    assert set(NOT_IDEMPOTENT) <= set(get_all_passes())
    covered = {spec.split("{")[0] for spec in SPECS}
    assert covered | set(NOT_IDEMPOTENT) == set(get_all_passes())


EXAMPLES = 6 if settings.default.derandomize else 60  # the `explore` profile (tests/conftest.py) draws more


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    st.one_of(
        graphs(max_ops=10, patterns=PATTERNS),  # MIR with dead values and fusable chains
        graphs(max_ops=4, ops=[*hir.ALL_OPS, MatmulOp, SiluOp]),
    )
)
def test_every_pass_twice_equals_once_on_random_graphs(module):
    assert_idempotent(module)


DIMS = {"batch": 1, "seq": 4, "dim": 16, "n_heads": 2, "n_kv_heads": 1, "ffn": 32}


@pytest.mark.parametrize(
    "build",
    [
        lambda: build_llama(1, **DIMS),
        lambda: build_llama_hir(1, **DIMS),
        lambda: build_llama_training(1, **DIMS),
    ],
    ids=["llama", "llama-hir", "llama-training"],
)
def test_every_pass_twice_equals_once_on_llama(build):
    assert_idempotent(build())


def test_grad_twice_is_a_located_error():
    module = build_llama(1, **DIMS)
    grad = make_pass("rlx-grad{func=llama}")
    grad.apply(make_context(), module)
    with pytest.raises(OpError, match="cannot add @llama_grad: the symbol already exists"):
        grad.apply(make_context(), module)


# The defects the property found ----------------------------------------------------------

SCE_BESIDE_DEAD_CODE = """
func.func @f(%logits: tensor<2x3xf32>, %labels: tensor<2xi64>) -> tensor<2xf32> {
  %dead = mir.exp %logits : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %loss = mir.softmax_cross_entropy_with_logits %logits, %labels : (tensor<2x3xf32>, tensor<2xi64>) -> tensor<2xf32>
  func.return %loss : tensor<2xf32>
}
"""


def test_sce_lowering_keeps_unrelated_dead_ops():
    """xDSL's greedy applier erased `%dead` (`rlx-dce`'s job), and the SCE ops left dead by a first run on a second."""
    module = parse_module(SCE_BESIDE_DEAD_CODE)
    make_pass("rlx-lower-softmax-cross-entropy").apply(make_context(), module)
    assert "mir.exp %logits" in print_ir(module)


DEAD_USER_BLOCKS_A_REGION = """
func.func @pair(%x: tensor<4x8xf32>, %y: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %s = mir.add %x, %y : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %e = mir.exp %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %dead = mir.neg %s : (tensor<4x8xf32>) -> tensor<4x8xf32>
  func.return %e : tensor<4x8xf32>
}
"""


def test_fusion_pipeline_fuses_past_dead_users_in_one_run():
    """The dead `neg` made `%s` look used twice until the pipeline's final `rlx-dce`; a second run then fused."""
    module = parse_module(DEAD_USER_BLOCKS_A_REGION)
    make_pass("rlx-fusion-pipeline{target=best}").apply(make_context(), module)
    ops = [op.name for op in module.ops.first.body.block.ops]
    assert ops == ["mir.elementwise_region", "func.return"]


UNROLLED_LOOP = """
func.func @loop(%v: tensor<2x4xf32>, %i: tensor<1xf32>) -> tensor<2x4xf32> {
  %r, %n = mir.while (%v, %i) max_iterations = 3 : (tensor<2x4xf32>, tensor<1xf32>) -> (tensor<2x4xf32>, tensor<1xf32>) cond {
  ^bb0(%x: tensor<2x4xf32>, %k: tensor<1xf32>):
    %limit = mir.constant dense<3.0> : tensor<1xf32>
    %more = mir.compare lt, %k, %limit : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xi1>
    mir.yield %more : tensor<1xi1>
  } do {
  ^bb0(%x_1: tensor<2x4xf32>, %k_1: tensor<1xf32>):
    %two = mir.constant dense<2.0> : tensor<1xf32>
    %one = mir.constant dense<1.0> : tensor<1xf32>
    %x2 = mir.mul %x_1, %two : (tensor<2x4xf32>, tensor<1xf32>) -> tensor<2x4xf32>
    %k1 = mir.add %k_1, %one : (tensor<1xf32>, tensor<1xf32>) -> tensor<1xf32>
    mir.yield %x2, %k1 : tensor<2x4xf32>, tensor<1xf32>
  }
  func.return %r : tensor<2x4xf32>
}
"""


def test_fusion_pipeline_reaches_its_fixed_point_on_an_unrolled_loop():
    """The unrolled loop's dead counter update grouped the regions differently, so a second run moved constants."""
    result = once_and_twice(make_pass("rlx-fusion-pipeline"), parse_module(UNROLLED_LOOP))
    assert result is not None
    once, twice = result
    assert twice == once


NORM_OF_A_CONSTANT = """
func.func @f(%g: tensor<4xf32>) -> tensor<6x4xf32> {
  %c = mir.constant dense<1.5> : tensor<2x3x4xf32>
  %n = mir.rms_norm %c, %g, %g axis = -1 eps = 1.0e-06 : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %r = mir.reshape %n new_shape = [6, 4] : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  func.return %r : tensor<6x4xf32>
}
"""


def test_best_fusion_pipeline_folds_what_its_fusions_expose():
    """`rlx-fuse-rms-norm-reshape` moves the reshape onto the constant; only a second run folded it."""
    result = once_and_twice(make_pass("rlx-fusion-pipeline{target=best}"), parse_module(NORM_OF_A_CONSTANT))
    assert result is not None
    once, twice = result
    assert "mir.reshape" not in once
    assert twice == once


def test_only_the_rewriting_helper_builds_xdsl_walkers():
    """Every pass applies its patterns through `rewriting.apply_patterns`, where dead-op erasure is off."""
    package = Path(rlx_xdsl.__file__).parent
    helper = package / "transforms" / "rewriting.py"
    builders = [
        str(path.relative_to(package))
        for path in package.rglob("*.py")
        if path != helper and ("PatternRewriteWalker(" in (text := path.read_text()) or "GreedyRewritePatternApplier(" in text)
    ]
    assert builders == []
