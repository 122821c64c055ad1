"""Every fusion pass, and every target's pipeline, keeps what random graphs compute.

Graphs come from the shared generator with the fusion patterns mixed in
(`graphgen.patterns.PATTERNS`: the chains each pass matches, and near misses
of them), so the passes rewrite something in most graphs, not only in the
rare random matmul-add-gelu. Outputs are compared with a tolerance only for
the passes that regroup matmuls (a wider matmul may sum in another order).
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.dialects.mir.contraction import DotGeneralOp
from rlx_xdsl.dialects.mir.elementwise import AddOp, TanhOp
from rlx_xdsl.dialects.mir.fused_regions import ElementwiseRegionOp
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import PATTERNS, graphs, inputs_for
from rlx_xdsl.testing.graphgen import patterns as pat
from rlx_xdsl.transforms import FUSION_PASSES
from rlx_xdsl.transforms.fusion.pipeline import TARGETS, FusionPipelinePass

REGROUPS_MATMULS = {
    "rlx-fuse-shared-input-matmul",
    "rlx-fuse-swiglu-dual-matmul",
    "rlx-fuse-attention-block",
    "rlx-lower-dot-general",
    "rlx-fusion-pipeline",
}
SETTINGS = settings(max_examples=20, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
"""Derandomized: the same graphs every run, so "the pass fired" below cannot flake."""


def assert_same_outputs(before, after, exact: bool) -> None:
    assert len(before) == len(after)
    for want, got in zip(before, after):
        assert got.dtype == want.dtype and got.shape == want.shape
        if exact:
            np.testing.assert_array_equal(got, want)
        else:
            tol = 2e-2 if want.dtype.itemsize == 2 else 1e-4
            np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def check_pass(module, pass_, exact: bool) -> bool:
    """Apply `pass_` and compare outputs; True if the pass changed the graph."""
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    text = str(module)
    pass_.apply(Context(), module)
    module.verify()
    assert_same_outputs(before, run_function(module, None, inputs), exact)
    return str(module) != text


def pattern_graphs(*home):
    """Graphs of fusion patterns (and near misses), weighted towards the pass's own `home` patterns."""
    return graphs(max_ops=6, ops=[], patterns=[*PATTERNS, *home * 4], max_inputs=32)


def after(*names):
    """Apply the fusion passes `names` (in order) to a drawn graph: the IR a later pass sees."""

    def apply(module):
        for name in names:
            FUSION_PASSES[name]()().apply(Context(), module)
        return module

    return apply


FK_GRAPHS = pattern_graphs(pat.upsample_chain, pat.batch_slices)
"""Graphs with RLX's FK patterns: 2x resizes feeding activations, chains or resizes; batch slices."""
FK_MARKED = ("rlx-mark-elementwise-regions", "rlx-mark-batch-slice-regions")


SOURCES = {
    "rlx-fuse-attention-block": pattern_graphs(pat.attention_block),
    "rlx-fuse-matmul-bias-act": pattern_graphs(pat.matmul_bias_act),
    "rlx-fuse-lora": pattern_graphs(pat.lora),
    "rlx-fuse-matmul-epilogue": pattern_graphs(pat.matmul_epilogue),
    "rlx-fuse-residual-layer-norm": pattern_graphs(pat.residual_norm),
    "rlx-fuse-residual-rms-norm": pattern_graphs(pat.residual_norm),
    "rlx-fuse-rms-norm-reshape": pattern_graphs(pat.rms_norm_reshape),
    "rlx-fuse-shared-input-matmul": pattern_graphs(pat.shared_input_matmuls, pat.swiglu_dual),
    "rlx-fuse-swiglu": pattern_graphs(pat.split_swiglu),
    "rlx-fuse-swiglu-dual-matmul": pattern_graphs(pat.swiglu_dual),
    "rlx-mark-elementwise-regions": pattern_graphs(pat.elementwise_chain),
    "rlx-lower-control-flow": graphs(max_ops=4, ops=[IfOp, WhileOp, AddOp, TanhOp]),
    "rlx-lower-dot-general": graphs(max_ops=4, ops=[DotGeneralOp, AddOp]),
    "rlx-unfuse-elementwise-regions": graphs(max_ops=4, ops=[ElementwiseRegionOp, AddOp]),
    "rlx-clip-elementwise-regions": graphs(max_ops=4, ops=[ElementwiseRegionOp, AddOp]),
    "rlx-constant-fold": graphs(max_ops=8, max_inputs=1),
    # RLX's FK passes, each on the IR the passes before it in rlx-fusion-pipeline make.
    "rlx-mark-batch-slice-regions": FK_GRAPHS,
    "rlx-mark-transform-regions": FK_GRAPHS,
    "rlx-fuse-region-prologue": FK_GRAPHS.map(after(*FK_MARKED)),
    "rlx-fuse-batch-preprocess": FK_GRAPHS.map(after(*FK_MARKED)),
    "rlx-decompose-fusion-regions": FK_GRAPHS.map(
        after(*FK_MARKED, "rlx-mark-transform-regions", "rlx-fuse-region-prologue", "rlx-fuse-batch-preprocess")
    ),
}
"""The graphs each pass rewrites: fusion patterns, or the ops a lowering removes
(constant folding: any ops, with most operands constants)."""
OPTIONS = {"rlx-clip-elementwise-regions": {"max_steps": 2}}
PASSES = sorted(set(FUSION_PASSES) - {"rlx-fusion-pipeline"})


@pytest.mark.parametrize("name", PASSES)
def test_pass_keeps_outputs_and_fires(name):
    pass_ = FUSION_PASSES[name]()(**OPTIONS.get(name, {}))
    changed = []

    @SETTINGS
    @given(SOURCES[name])
    def run(module):
        changed.append(check_pass(module, pass_, exact=name not in REGROUPS_MATMULS))

    run()
    assert any(changed), f"{name} never rewrote a graph"


@pytest.mark.parametrize("target", sorted(TARGETS))
def test_pipeline_keeps_outputs_of_mixed_graphs(target):
    """Random ops and fusion patterns together; control flow is lowered first (bounded loops only)."""

    @SETTINGS
    @given(graphs(max_ops=6, patterns=PATTERNS, max_inputs=24))
    def run(module):
        check_pass(module, FusionPipelinePass(target=target), exact=False)

    run()
