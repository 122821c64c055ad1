"""`rlx-unfuse` unfolds mir.selective_scan and mir.gated_delta_net in time.

The counts are the seed's (`unfuse_decomposes_selective_scan`,
`unfuse_decomposes_gated_delta_net`); the unfolded graph must compute exactly what
the op's kernel computes, on chosen inputs and on random graphs.
"""

from collections import Counter

import ml_dtypes
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import AddOp, ExpOp, MulOp, TanhOp
from rlx_xdsl.dialects.mir.structured import GatedDeltaNetOp, SelectiveScanOp
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.unfuse import UnfusePass

RNG = np.random.default_rng(3)


def module_of(build, *specs):
    b = GraphBuilder("f")
    args = [b.input(f"a{i}", shape, dtype) for i, (shape, dtype) in enumerate(specs)]
    out = build(b, *args)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    module = b.module()
    module.verify()
    return module


def op_counts(module) -> Counter:
    return Counter(op.name for op in module.walk())


def unfuse(module):
    UnfusePass().apply(Context(), module)
    module.verify()
    return module


def ssm_module(batch=1, seq=3, hidden=2, size=4, dtype="f32"):
    shapes = [[batch, seq, hidden], [batch, seq, hidden], [hidden, size], [batch, seq, size], [batch, seq, size]]
    return module_of(lambda b, *args: b.selective_scan(*args), *[(s, dtype) for s in shapes])


def gdn_module(batch=1, seq=3, heads=2, size=4, dtype="f32", with_state=False):
    shapes = [[batch, seq, heads, size]] * 3 + [[batch, seq, heads]] * 2
    if with_state:
        shapes.append([batch, heads, size, size])
    return module_of(lambda b, *args: b.gated_delta_net(*args), *[(s, dtype) for s in shapes])


def test_selective_scan_unfolds_with_the_seeds_counts():
    counts = op_counts(unfuse(ssm_module()))  # [1, 3, 2], state size 4
    assert counts["mir.selective_scan"] == 0
    assert counts["mir.concat"] == 1  # over the 3 steps
    assert counts["mir.reduce"] == 3  # one sum per step
    assert counts["mir.exp"] == 3  # one exp(delta * a) per step
    assert counts["mir.narrow"] >= 12  # x, delta, b, c per step


def test_gated_delta_net_unfolds_with_the_seeds_counts():
    counts = op_counts(unfuse(gdn_module()))  # [1, 3, 2, 4]
    assert counts["mir.gated_delta_net"] == 0
    assert counts["mir.concat"] == 1
    assert counts["mir.matmul"] == 3 * 3  # k @ M, outer(k, d), q @ M per step
    assert counts["mir.exp"] == 3  # one exp(g) per step


def inputs(module, dtype):
    function = module.ops.first
    return [(RNG.standard_normal(a.type.get_shape()) * 0.7).astype(dtype) for a in function.args]


@pytest.mark.parametrize(("dtype", "numpy"), [("f32", np.float32), ("f64", np.float64), ("bf16", ml_dtypes.bfloat16)])
@pytest.mark.parametrize(
    "make",
    [
        lambda dtype: ssm_module(2, 5, 3, 2, dtype),
        lambda dtype: gdn_module(2, 4, 2, 3, dtype),
        lambda dtype: gdn_module(1, 3, 3, 2, dtype, with_state=True),
        lambda dtype: ssm_module(1, 1, 1, 1, dtype),
    ],
    ids=["ssm", "gdn", "gdn-state", "ssm-one-step"],
)
def test_unfolded_graph_computes_exactly_what_the_kernel_computes(make, dtype, numpy):
    module = make(dtype)
    data = inputs(module, numpy)
    before = run_function(module, None, data)
    after = run_function(unfuse(module), None, data)
    assert len(before) == len(after)
    for b, a in zip(before, after):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=6, ops=[SelectiveScanOp, GatedDeltaNetOp, AddOp, MulOp, ExpOp, TanhOp]))
def test_unfuse_preserves_random_graphs_with_state_space_ops(module):
    data = inputs_for(module)
    before = run_function(module, None, data)
    after = run_function(unfuse(module), None, data)
    assert not [op for op in module.walk() if isinstance(op, SelectiveScanOp | GatedDeltaNetOp)]
    for b, a in zip(before, after, strict=True):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)  # NaNs in the same places count as equal


def test_dynamic_shapes_are_a_diagnostic_at_the_op():
    module = module_of(
        lambda b, q, g: b.gated_delta_net(q, q, q, g, g),
        ([1, DYNAMIC, 2, 4], "f32"),
        ([1, DYNAMIC, 2], "f32"),
    )
    with pytest.raises(OpError, match=r"'mir.gated_delta_net' can only be unfolded in time with static shapes") as e:
        UnfusePass().apply(Context(), module)
    assert isinstance(e.value.op, GatedDeltaNetOp)


def test_an_empty_sequence_is_a_diagnostic_not_an_empty_concat():
    module = ssm_module(seq=0)
    (y,) = run_function(module, None, inputs(module, np.float32))
    assert y.shape == (1, 0, 2)
    with pytest.raises(OpError, match="'mir.selective_scan' over an empty sequence has nothing to unfold"):
        UnfusePass().apply(Context(), module)
