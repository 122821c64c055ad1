"""RLX's autodiff tests (`rlx-autodiff/src/autodiff.rs`), ported: the numbers.

`lit_tests/autodiff/grad-seed.mlir` checks the IR of each ported graph; here
each of its chunks is widened to f64, differentiated and checked against
central differences, and the seed's unfuse-then-differentiate tests run on
`selective_scan` and `gated_delta_net` (op counts of the unfolding, then
gradients). The custom_fn and scan tests (`custom_fn_vjp_body_is_inlined_into_bwd`,
`custom_fn_without_vjp_inlines_fwd_body_for_autodiff`,
`convert_scans_for_ad_forces_save_trajectory_true`) are in `test_structured.py`;
the control-flow and fused-op tests wait for the issues listed in
`autodiff.rules.mir.pending()`.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.mir.structured import GatedDeltaNetOp, SelectiveScanOp
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.ir.source import parse_source, split_chunks
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.widen import widen_to_f64

SEED_LIT = Path(__file__).parents[2] / "lit_tests/autodiff/grad-seed.mlir"
RNG = np.random.default_rng(8)
CHUNKS = [text for text, _ in split_chunks(SEED_LIT.read_text())]


@pytest.mark.parametrize("chunk", range(len(CHUNKS)))
def test_the_seed_graphs_differentiate_to_central_differences(chunk):
    module, _ = parse_source(make_context(), CHUNKS[chunk], str(SEED_LIT))
    widen_to_f64(module)
    f = find_function(module, "f")
    inputs = [RNG.standard_normal(arg.type.get_shape()) for arg in f.body.block.args]
    if f.body.block.args[0].type.get_shape() == (2, 2):  # dense_solve needs a well-conditioned A
        inputs[0] = inputs[0] + 3 * np.eye(2)
    check_gradients(module, "f", inputs, [0, 1])


def test_the_seeds_add_gradient_is_the_seed_itself():
    module, _ = parse_source(make_context(), CHUNKS[0], str(SEED_LIT))
    d_output = RNG.standard_normal(4).astype(np.float32)
    x, y = RNG.standard_normal((2, 4)).astype(np.float32)
    dx, dy = check_gradients(module, "f", [x, y], [0, 1], cotangent=d_output, eps=1e-2, rtol=1e-3, atol=1e-3)
    np.testing.assert_array_equal(dx, d_output)
    np.testing.assert_array_equal(dy, d_output)


@pytest.mark.parametrize("carry_state", [False, True])
def test_gated_delta_net_is_differentiated_through_its_unfolding(carry_state):
    """RLX's grad_through_gated_delta_net_propagates, checked numerically."""
    b = GraphBuilder("f")
    names = ["q", "k", "v"]
    rows = [b.param(n, [1, 3, 2, 2], "f64") for n in names]
    g = b.param("g", [1, 3, 2], "f64")
    beta = b.param("beta", [1, 3, 2], "f64")
    state = b.param("state", [1, 2, 2, 2], "f64") if carry_state else None
    result = b.emit(GatedDeltaNetOp(*rows, g, beta, state))
    out = result[0] if isinstance(result, tuple) else result
    b.output(b.reduce(b.mul(out, out), kind="sum", axes=[0, 1, 2, 3]))
    module = b.module()
    prepare_for_ad(module)
    assert not [op for op in module.walk() if isinstance(op, GatedDeltaNetOp)]
    shapes = [(1, 3, 2, 2)] * 3 + [(1, 3, 2), (1, 3, 2)] + ([(1, 2, 2, 2)] if carry_state else [])
    inputs = [RNG.standard_normal(s) * 0.5 for s in shapes]
    check_gradients(module, "f", inputs, list(range(len(inputs))))


def unfolded_op_counts(module) -> Counter:
    """How many ops of each kind the unfolding left (`mir.reduce` counted per kind)."""
    counts = Counter()
    for op in module.walk():
        counts[op.name + (f" {op.kind.data.value}" if op.name == "mir.reduce" else "")] += 1
    return counts


def test_unfuse_decomposes_selective_scan():
    """RLX's unfuse_decomposes_selective_scan (S = 3, state_size 4) and
    grad_through_selective_scan_propagates: loss plus one gradient per param."""
    b = GraphBuilder("f")
    x, delta = b.input("x", [1, 3, 2]), b.input("delta", [1, 3, 2])
    a = b.param("a", [2, 4])
    bb, c = b.input("b", [1, 3, 4]), b.input("c", [1, 3, 4])
    b.output(b.selective_scan(x, delta, a, bb, c, state_size=4))  # rlx-grad takes a loss of any shape
    module = b.module()
    prepare_for_ad(module)
    counts = unfolded_op_counts(module)
    assert counts[SelectiveScanOp.name] == 0
    assert counts["mir.concat"] == 1  # over the 3 steps
    assert counts["mir.reduce sum"] == 3  # one per step
    assert counts["mir.exp"] == 3  # exp(delta A) per step
    assert counts["mir.narrow"] >= 12  # 4 per step
    build_gradient(module, "f")
    assert len(find_function(module, "f_grad").function_type.outputs.data) == 1 + 1


def test_unfuse_decomposes_gated_delta_net():
    """RLX's unfuse_decomposes_gated_delta_net (S = 3) and grad_through_gated_delta_net_propagates."""
    b = GraphBuilder("f")
    q, k, v = (b.param(n, [1, 3, 2, 4]) for n in ("q", "k", "v"))
    g, beta = b.param("g", [1, 3, 2]), b.param("beta", [1, 3, 2])
    b.output(b.emit(GatedDeltaNetOp(q, k, v, g, beta)))
    module = b.module()
    prepare_for_ad(module)
    counts = unfolded_op_counts(module)
    assert counts[GatedDeltaNetOp.name] == 0
    assert counts["mir.concat"] == 1
    assert counts["mir.matmul"] >= 3
    assert counts["mir.exp"] == 3  # exp(g) per step
    build_gradient(module, "f")
    assert len(find_function(module, "f_grad").function_type.outputs.data) == 1 + 5
