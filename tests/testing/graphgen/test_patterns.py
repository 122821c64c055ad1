"""Fusion pattern recipes: each emits the chain its pass matches, sometimes spoiled."""

from collections import Counter

import pytest
from hypothesis import HealthCheck, Phase, given, settings

from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import PATTERNS, graphs, inputs_for
from rlx_xdsl.testing.graphgen import patterns as pat

SIGNATURE = {
    pat.matmul_bias_act: {"mir.matmul", "mir.add"},
    pat.residual_norm: {"mir.add"},
    pat.rms_norm_reshape: {"mir.rms_norm", "mir.reshape"},
    pat.swiglu_dual: {"mir.matmul", "mir.silu", "mir.mul"},
    pat.shared_input_matmuls: {"mir.matmul"},
    pat.split_swiglu: {"mir.narrow", "mir.silu", "mir.mul"},
    pat.elementwise_chain: set(),
    pat.matmul_epilogue: {"mir.matmul", "mir.add", "mir.mul"},
    pat.attention_block: {"mir.matmul", "mir.reshape", "mir.transpose", "mir.attention"},
    pat.lora: {"mir.matmul", "mir.add"},
    pat.upsample_chain: {"mir.resize_nearest_2x"},
    pat.batch_slices: {"mir.narrow", "mir.concat"},
}
"""Ops every graph of each pattern holds (elementwise chains draw their ops)."""


def test_every_pattern_has_a_signature():
    assert set(SIGNATURE) == set(PATTERNS)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.__name__)
def test_pattern_graphs_verify_run_and_hold_their_chain(pattern):
    seen: Counter[str] = Counter()

    @settings(max_examples=15, deadline=None, database=None, phases=[Phase.generate],
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(graphs(max_ops=1, ops=[], patterns=[pattern], max_inputs=16))
    def check(module):
        module.verify()
        run_function(module, None, inputs_for(module))
        names = {op.name for op in module.walk()} - {"builtin.module", "func.func", "func.return"}
        if names - {"mir.constant"}:  # the pattern ran (it declines when the pool has no operand)
            seen.update(["ran"])
            assert SIGNATURE[pattern] <= names

    check()
    assert seen["ran"] > 0


def test_near_misses_occur():
    """Across graphs, some swiglu chains have the gate matmul first or a second consumer."""
    orders = Counter()

    @settings(max_examples=40, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(graphs(max_ops=1, ops=[], patterns=[pat.swiglu_dual], max_inputs=16))
    def check(module):
        ops = list(module.ops.first.body.block.ops)
        silu = next(op for op in ops if op.name == "mir.silu")
        gate = silu.operands[0].owner
        first_matmul = next(op for op in ops if op.name == "mir.matmul")
        orders["gate first" if first_matmul is gate else "up first"] += 1

    check()
    assert orders["gate first"] > 0 and orders["up first"] > 0
