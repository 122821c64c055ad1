"""`rlx-prepare-ad`: its step list, each step's rewrite (IR valid after every step, values
kept), and graphs that only become differentiable through it."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from xdsl.dialects import func

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import PREPARE_STEPS, describe_steps, prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.backward import OPS as BACKWARD_OPS
from rlx_xdsl.dialects.mir.reduction import ReduceOp
from rlx_xdsl.dialects.mir.structured import SelectiveScanOp
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.graphgen import available_ops, graphs, inputs_for
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.widen import FIXED_F32_OPS, widen_to_f64, widens_fully

RNG = np.random.default_rng(17)


def prepared(module):
    """Run rlx-prepare-ad, verifying (with located errors) after every step."""
    seen = []

    def verify(step):
        verify_located(module)
        seen.append(step.name)

    prepare_for_ad(module, after_step=verify)
    assert seen == [step.name for step in PREPARE_STEPS]
    return module


def same_outputs(build, name="f"):
    """Outputs of a fresh graph before and after rlx-prepare-ad are equal."""
    before = build()
    inputs = random_inputs(find_function(before, name), seed=3)
    expected = run_function(before, name, inputs)
    after = prepared(build())
    for got, want in zip(run_function(after, name, inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    return after


def ops_named(module, op_class):
    return [op for op in module.walk() if isinstance(op, op_class)]


def test_the_steps_follow_rlx_order_and_say_which_are_pending():
    assert [step.name for step in PREPARE_STEPS] == [
        "lower-hir",
        "unfuse",
        "decompose-backward",
        "lower-dot-general",
        "inline-if",
        "unroll-while",
        "inline-custom-fn",
        "materialize-scan-bcasts",
        "convert-scans-for-ad",
        "legalize-multi-axis-reduce",
        "fuse-decomposed-gaussian-splat",
    ]
    lines = describe_steps()
    assert lines[1] == "unfuse: expand composite ops without a VJP rule through their rlx-unfuse rule"
    assert lines[6] == "inline-custom-fn: mir.custom_fn without a vjp body is replaced by its forward body"


# legalize-multi-axis-reduce ---------------------------------------------------------------


def multi_axis_reduce(kind="sum", dtype="f32", keep_dim=False):
    """A multi-axis reduce with a consumer after it (RLX's rewrite breaks the order there)."""

    def build():
        b = GraphBuilder("f")
        x = b.input("x", [2, 3, 4], dtype)
        r = b.reduce(x, kind=kind, axes=[2, 0], keep_dim=keep_dim)
        b.output(b.add(r, r))
        return b.module()

    return build


@pytest.mark.parametrize("kind", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("keep_dim", [False, True])
def test_multi_axis_reduces_become_single_axis_chains_in_order(kind, keep_dim):
    module = same_outputs(multi_axis_reduce(kind, keep_dim=keep_dim))
    reduces = ops_named(module, ReduceOp)
    assert [list(r.axes.get_values()) for r in reduces] == [[0], [2]]
    assert all(r.keep_dim is not None for r in reduces)


def test_an_integer_mean_is_left_whole():
    """Truncating per axis is not the truncated mean: [[1, 2], [2, 3]] gives 1 against 2."""
    module = same_outputs(multi_axis_reduce("mean", "i32"))
    assert [list(r.axes.get_values()) for r in ops_named(module, ReduceOp)] == [[2, 0]]


# decompose-backward: gradients of gradients ------------------------------------------------


def only_the_gradient(module, name):
    """`@name` returning only its last result (a gradient), as `@<name>_only` for rlx-grad."""
    grad = find_function(module, name).clone()
    grad.sym_name = type(grad.sym_name)(f"{name}_only")
    ret = grad.body.block.last_op
    new_ret = func.ReturnOp(ret.operands[-1])
    grad.body.block.insert_op_before(new_ret, ret)
    grad.body.block.erase_op(ret)
    grad.update_function_type()
    module.body.block.add_op(grad)
    return f"{name}_only"


@pytest.mark.parametrize("activation", ["tanh", "gelu", "relu", "sigmoid", "softmax"])
def test_a_gradient_of_a_gradient_matches_central_differences(activation):
    """Hessian-vector products: `rlx-grad` of `@f_grad`, once its kernels are decomposed."""
    b = GraphBuilder("f")
    x = b.param("x", [2, 3], "f64")
    w = b.input("w", [2, 3], "f64")
    act = getattr(b, activation)(b.mul(x, w)) if activation != "softmax" else b.softmax(b.mul(x, w), axis=-1)
    b.output(b.reduce(b.mul(act, act), kind="sum", axes=[0, 1]))
    module = b.module()
    build_gradient(module, "f")
    first = only_the_gradient(module, "f_grad")
    prepared(module)
    assert not [op for op in find_function(module, first).walk() if type(op) in BACKWARD_OPS]
    inputs = [RNG.standard_normal((2, 3)), RNG.standard_normal((2, 3)), np.array(1.0)]
    check_gradients(module, first, inputs, [0])


# unfuse ---------------------------------------------------------------------------------------


def test_selective_scan_is_differentiated_through_its_unfolding():
    b = GraphBuilder("f")
    x = b.param("x", [1, 3, 2], "f64")
    delta = b.input("delta", [1, 3, 2], "f64")
    a = b.param("a", [2, 2], "f64")
    bb = b.input("b", [1, 3, 2], "f64")
    c = b.input("c", [1, 3, 2], "f64")
    y = b.selective_scan(x, delta, a, bb, c, state_size=2)
    b.output(b.reduce(b.mul(y, y), kind="sum", axes=[0, 1, 2]))
    module = prepared(b.module())
    assert not ops_named(module, SelectiveScanOp)
    shapes = [(1, 3, 2), (1, 3, 2), (2, 2), (1, 3, 2), (1, 3, 2)]
    inputs = [RNG.standard_normal(s) * 0.5 for s in shapes]
    check_gradients(module, "f", inputs, [0, 2])


# Whole graphs ---------------------------------------------------------------------------


def test_prepare_keeps_the_llama_graph_valid_and_its_outputs():
    same_outputs(lambda: build_llama(1, dim=16, n_heads=2, n_kv_heads=1, seq=3, batch=1, ffn=24), "llama")


@pytest.mark.parametrize("fused", ["matmul_bias_act", "swiglu", "residual_rms_norm"])
def test_fused_ops_are_differentiated_through_their_unfusing(fused):
    b = GraphBuilder("f")
    x = b.param("x", [3, 4], "f64")
    if fused == "matmul_bias_act":
        out = b.fused_matmul_bias_act(
            x, b.param("w", [4, 5], "f64"), b.param("b", [5], "f64"), activation="gelu"
        )
    elif fused == "swiglu":
        out = b.fused_swiglu(x, gate_first=True)
    else:
        r, g, beta = (b.param(n, s, "f64") for n, s in (("r", [3, 4]), ("g", [4]), ("beta", [4])))
        out = b.fused_residual_rms_norm(x, r, g, beta, b.param("bias", [4], "f64"), eps=1e-3)
    b.output(b.reduce(b.mul(out, out), kind="sum", axes=[0, 1]))
    module = prepared(b.module())
    assert not [op for op in module.walk() if op.name.startswith("mir.fused")]
    f = find_function(module, "f")
    inputs = [RNG.standard_normal(a.type.get_shape()) for a in f.body.block.args]
    check_gradients(module, "f", inputs, list(range(len(inputs))))


def test_hir_blocks_are_lowered_with_the_fusable_policy_and_differentiated():
    """RLX's `grad_with_loss_module` on HIR: lowered as for autodiff, primitives only."""
    b = GraphBuilder("f")
    x = b.input("x", [2, 3], "f64")
    w = b.param("w", [3, 4], "f64")
    bias = b.param("bias", [4], "f64")
    h = b.hir.linear(x, w, bias, activation="silu")
    b.output(
        b.reduce(
            b.hir.rms_norm(h, b.param("g", [4], "f64"), b.param("beta", [4], "f64"), eps=1e-3),
            kind="sum",
            axes=[0, 1],
        )
    )
    module = prepared(b.module())
    names = {op.name for op in module.walk()}
    assert not [n for n in names if n.startswith("hir.") or n.startswith("mir.fused")]
    inputs = [RNG.standard_normal(s) for s in ((2, 3), (3, 4), (4,), (4,), (4,))]
    check_gradients(module, "f", inputs, [1, 2, 3, 4])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=10, ops=[op for op in available_ops() if op not in FIXED_F32_OPS]))
def test_prepare_keeps_what_random_graphs_compute(module):
    """In f64 (half-precision reduces would round between the legalised steps); graphs with
    complex values, which cannot be widened, are left out."""
    assume(widens_fully(module))
    widen_to_f64(module)
    inputs = inputs_for(module)
    expected = run_function(module, "main", inputs)
    try:
        prepared(module)
    except OpError as error:  # an unfolding that needs static shapes, say: located, never a crash
        assert error.op.parent_op() is not None
        return
    for got, want in zip(run_function(module, "main", inputs), expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12, equal_nan=True)
