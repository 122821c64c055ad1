"""`rlx-legalize-broadcast` and `rlx-promote-params`: graphs compute the same, with the
broadcasts made explicit / the parameters turned into inputs."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.traits import is_elementwise
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.transforms.legalize_broadcast import LegalizeBroadcastPass, broadcasts_natively
from rlx_xdsl.transforms.promote_params import PromoteParamsPass


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=5))
def test_random_graphs_keep_their_values_with_explicit_broadcasts(module):
    inputs = inputs_for(module)
    before = run_function(module, "main", inputs)
    try:
        LegalizeBroadcastPass().apply(Context(), module)
    except OpError as e:
        assert "dynamic in the result only" in e.message
        return
    module.verify()
    for op in module.walk():
        if is_elementwise(op) and op.parent_op().name == "func.func":
            out = tensor_type(op.results[0]).get_shape()
            assert all(broadcasts_natively(tensor_type(v).get_shape(), out) for v in op.operands)
    for a, b in zip(run_function(module, "main", inputs), before, strict=True):
        np.testing.assert_array_equal(a, b)


def test_column_broadcasts_become_expands_but_biases_and_scalars_stay():
    b = GraphBuilder("f")
    x, col, bias, one = b.input("x", [3, 4]), b.input("c", [3, 1]), b.input("b", [4]), b.input("s", [1, 1])
    b.output(b.mul(b.add(b.add(x, col), bias), one))
    module = b.module()
    LegalizeBroadcastPass().apply(Context(), module)
    expands = [op for op in module.walk() if op.name == "mir.expand"]
    assert len(expands) == 1 and expands[0].operands[0].type.get_shape() == (3, 1)


def test_a_broadcast_into_a_dynamic_dim_is_reported():
    b = GraphBuilder("f")
    b.output(b.add(b.input("x", [DYNAMIC, 4]), b.input("c", [1, 1, 4])))
    with pytest.raises(OpError, match=r"cannot make the broadcast of \[1, 1, 4\] to \[1, \?, 4\] explicit: dim 1"):
        LegalizeBroadcastPass().apply(Context(), b.module())


def test_promote_params_turns_the_named_parameters_into_inputs():
    module = build_llama(1, batch=1, seq=2, dim=8, n_heads=2, n_kv_heads=1, ffn=16)
    f = next(op for op in module.walk() if op.name == "func.func")
    params = [a.name for a in graph_args(f) if a.is_param]
    PromoteParamsPass(names=tuple(params[:2])).apply(Context(), module)
    after = {a.name: a.is_param for a in graph_args(f)}
    assert not after[params[0]] and not after[params[1]] and all(after[p] for p in params[2:])
    PromoteParamsPass().apply(Context(), module)
    assert not any(a.is_param for a in graph_args(f))
    with pytest.raises(Exception, match="names=nope names no parameter"):
        PromoteParamsPass(names=("nope",)).apply(Context(), module)
