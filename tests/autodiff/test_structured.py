"""Autodiff of the structured ops: scans (xs, bcasts, checkpoints, several carries),
custom functions (with and without a vjp body), and the prepare-ad steps they need.

Every gradient is checked against central differences of the forward graph run by
the interpreter (`check_gradients`), in f64; a custom_fn's vjp body, which may be
deliberately wrong, is checked against its own formula instead.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import PREPARE_STEPS, prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.dialects.mir.structured import CustomFnOp, ScanBackwardOp, ScanOp
from rlx_xdsl.interpreters.mir.structured import observe_scans
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.ir.locations import op_position
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.gradcheck import check_gradients, module_function, numerical_vjp
from rlx_xdsl.testing.widen import widen_to_f64

RNG = np.random.default_rng(14)
EXAMPLE = Path(__file__).parents[2] / "examples/rnn_scan.mlir"


def prepared(module):
    """rlx-prepare-ad, verifying (with located errors) after every step."""
    prepare_for_ad(module, after_step=lambda step: verify_located(module))
    return module


def ops_of(module, op_class, function=None):
    root = module if function is None else find_function(module, function)
    return [op for op in root.walk() if isinstance(op, op_class)]


def rand(*shape, scale=0.5):
    return RNG.standard_normal(shape) * scale


def sum_of_squares(b, value):
    rank = len(value.type.get_shape())
    return b.reduce(b.mul(value, value), kind="sum", axes=list(range(rank)))


# Scans -------------------------------------------------------------------------------------

LENGTH = 5


def rnn(with_xs=True, with_bcasts=True, num_checkpoints=None, save_trajectory=False):
    """`h = tanh(h @ w + x_t)` (w a bcast, or a constant in the body; x_t a slice of xs, or a
    constant), loss = sum of squares of the result: the final carry or the trajectory."""
    b = GraphBuilder("f")
    h0 = b.param("h0", [2, 3], "f64")
    w = b.param("w", [3, 3], "f64") if with_bcasts else None
    xs = b.param("xs", [LENGTH, 2, 3], "f64") if with_xs else None
    w_in_body = rand(3, 3)

    def body(rb, h, *rest):
        rest = list(rest)
        weight = rest.pop(0) if with_bcasts else rb.constant(w_in_body, "f64")
        x_t = rest.pop(0) if with_xs else rb.constant(np.full((2, 3), 0.3), "f64")
        return rb.tanh(rb.add(rb.matmul(h, weight), x_t))

    h = b.scan(
        h0,
        body,
        LENGTH,
        bcasts=[w] if with_bcasts else [],
        xs=[xs] if with_xs else [],
        save_trajectory=save_trajectory,
        num_checkpoints=num_checkpoints,
    )
    b.output(sum_of_squares(b, h))
    inputs = [rand(2, 3)] + ([rand(3, 3)] if with_bcasts else []) + ([rand(LENGTH, 2, 3)] if with_xs else [])
    return b.module(), inputs


@pytest.mark.parametrize(
    "with_xs, with_bcasts", [(False, False), (True, False), (False, True), (True, True)], ids=["carry", "xs", "bcasts", "bcasts+xs"]
)
def test_a_scan_differentiates_to_central_differences(with_xs, with_bcasts):
    module, inputs = rnn(with_xs, with_bcasts)
    prepared(module)
    assert not [op for op in ops_of(module, ScanOp) if op.bcasts]
    check_gradients(module, "f", inputs, list(range(len(inputs))))
    (sweep,) = ops_of(module, ScanBackwardOp, "f_grad")
    assert len(sweep.gradients) == 1 + with_xs + with_bcasts  # one op: d_init and every d_xs
    assert sweep.forward is None


@pytest.mark.parametrize("num_checkpoints", [1, 2, 3, LENGTH])
@pytest.mark.parametrize("save_trajectory", [False, True], ids=["final", "trajectory"])
def test_a_checkpointed_scan_differentiates_and_keeps_only_its_checkpoints(num_checkpoints, save_trajectory):
    module, inputs = rnn(num_checkpoints=num_checkpoints, save_trajectory=save_trajectory)
    prepared(module)
    check_gradients(module, "f", inputs, [0, 1, 2])
    (scan,) = ops_of(module, ScanOp, "f_grad")
    assert scan.outputs[0].type.get_shape() == (num_checkpoints, 2, 3)
    (sweep,) = ops_of(module, ScanBackwardOp, "f_grad")
    assert (sweep.forward is not None) == (num_checkpoints < LENGTH)
    with observe_scans() as records:
        run_function(module, "f_grad", [*inputs, np.array(1.0)])
    forward = next(r for r in records if r.op == "mir.scan")
    assert forward.peak_saved == num_checkpoints
    backward = next(r for r in records if r.op == "mir.scan_backward")
    longest_segment = -(-LENGTH // num_checkpoints)
    assert backward.peak_saved <= math.ceil(math.log2(longest_segment))  # recompute by bisection
    assert backward.body_runs >= LENGTH  # the vjp body at every step, plus any recompute


def test_several_carries_a_passed_through_carry_and_a_value_yielded_twice():
    """Carries (a, b, c) -> (a * x_t + b, sin(a), sin(a)): the yields share a value and
    c is never read, so its gradient is only what reaches it from the loss directly."""
    b = GraphBuilder("f")
    a0, b0, c0 = (b.param(n, [3], "f64") for n in ("a0", "b0", "c0"))
    xs = b.param("xs", [4, 3], "f64")

    def body(rb, a, bb, c, x):
        s = rb.sin(a)
        return rb.add(rb.mul(a, x), bb), s, s

    a, bb, c = b.scan([a0, b0, c0], body, 4, xs=[xs])
    b.output(b.add(b.add(sum_of_squares(b, a), sum_of_squares(b, bb)), sum_of_squares(b, c)))
    module = prepared(b.module())
    check_gradients(module, "f", [rand(3), rand(3), rand(3), rand(4, 3)], [0, 1, 2, 3])


def test_an_integer_carry_gets_no_gradient_and_does_not_block_the_others():
    b = GraphBuilder("f")
    h0 = b.param("h0", [3], "f64")
    n0 = b.constant(np.zeros(3, np.int32), "i32")
    xs = b.param("xs", [4, 3], "f64")

    def body(rb, h, n, x):
        return rb.mul(rb.sin(h), rb.add(x, rb.cast(n, "f64"))), rb.add(n, rb.constant(np.ones(3, np.int32), "i32"))

    h, _ = b.scan([h0, n0], body, 4, xs=[xs])
    b.output(sum_of_squares(b, h))
    module = prepared(b.module())
    check_gradients(module, "f", [rand(3), rand(4, 3)], [0, 1])


def test_a_scan_inside_a_scan_differentiates():
    b = GraphBuilder("f")
    h0 = b.param("h0", [2], "f64")
    xs = b.param("xs", [3, 2], "f64")

    def outer(rb, h, x):
        return rb.scan(h, lambda ib, g, y: ib.sin(ib.mul(g, y)), 2, bcasts=[x])

    b.output(sum_of_squares(b, b.scan(h0, outer, 3, xs=[xs])))
    module = prepared(b.module())
    check_gradients(module, "f", [rand(2) + 1, rand(3, 2) + 1], [0, 1])


def test_the_example_rnn_differentiates_to_central_differences():
    """`examples/rnn_scan.mlir` (weights as bcasts), widened to f64."""
    module = parse_module(EXAMPLE.read_text())
    widen_to_f64(module)
    prepared(module)
    args = find_function(module, "rnn_loss").body.block.args
    inputs = [rand(*a.type.get_shape()) for a in args]
    check_gradients(module, "rnn_loss", inputs, [0, 1, 3, 4, 5])


# Scan errors: located at the op that explains them -----------------------------------------


def located(source: str):
    module, _ = parse_source(make_context(), source, "scan.mlir")
    return module


def line_of(source: str, text: str) -> int:
    return next(i for i, line in enumerate(source.splitlines(), 1) if text in line)


SCAN_WITH_IF = """
func.func @f(%h0: tensor<3xf64> {rlx.param}, %ps: tensor<3xi1>) -> tensor<3x3xf64> {
  %t = mir.scan init(%h0 : tensor<3xf64>) xs(%ps : tensor<3xi1>) length = 3 save_trajectory -> tensor<3x3xf64> {
  ^bb0(%h: tensor<3xf64>, %q: tensor<i1>):
    %s = mir.sin %h : (tensor<3xf64>) -> tensor<3xf64>
    %n = mir.if %q (%s) : (tensor<i1>, tensor<3xf64>) -> tensor<3xf64> {
    ^bb0(%a: tensor<3xf64>):
      mir.yield %a : tensor<3xf64>
    } else {
    ^bb0(%a: tensor<3xf64>):
      %m = mir.neg %a : (tensor<3xf64>) -> tensor<3xf64>
      mir.yield %m : tensor<3xf64>
    }
    mir.yield %n : tensor<3xf64>
  }
  func.return %t : tensor<3x3xf64>
}
"""


def test_a_scan_body_op_without_a_rule_is_a_located_error_at_that_op():
    module = located(SCAN_WITH_IF)
    with pytest.raises(OpError, match=r"^'rlx-grad' no VJP rule for 'mir.if'") as e:
        build_gradient(module, "f")
    assert e.value.op.name == "mir.if"
    assert op_position(e.value.op).line == line_of(SCAN_WITH_IF, "mir.if")
    assert len(list(module.ops)) == 1  # nothing was added


SCAN_WITH_BCAST = """
func.func @f(%h0: tensor<3xf64> {rlx.param}, %w: tensor<3xf64> {rlx.param}) -> tensor<3x3xf64> {
  %t = mir.scan init(%h0 : tensor<3xf64>) bcasts(%w : tensor<3xf64>) length = 3 save_trajectory -> tensor<3x3xf64> {
  ^bb0(%h: tensor<3xf64>, %v: tensor<3xf64>):
    %n = mir.mul %h, %v : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
    mir.yield %n : tensor<3xf64>
  }
  func.return %t : tensor<3x3xf64>
}
"""

SCAN_WITHOUT_TRAJECTORY = """
func.func @f(%h0: tensor<3xf64> {rlx.param}) -> tensor<3xf64> {
  %t = mir.scan init(%h0 : tensor<3xf64>) length = 3 -> tensor<3xf64> {
  ^bb0(%h: tensor<3xf64>):
    %n = mir.sin %h : (tensor<3xf64>) -> tensor<3xf64>
    mir.yield %n : tensor<3xf64>
  }
  func.return %t : tensor<3xf64>
}
"""


@pytest.mark.parametrize(
    "source, message",
    [
        (SCAN_WITH_BCAST, "its bcasts must become xs (run rlx-prepare-ad first: its materialize-scan-bcasts step)"),
        (
            SCAN_WITHOUT_TRAJECTORY,
            "the backward sweep needs its trajectory (run rlx-prepare-ad first: its convert-scans-for-ad step)",
        ),
    ],
    ids=["bcasts", "no-trajectory"],
)
def test_an_unprepared_scan_is_a_located_error_naming_the_step(source, message):
    module = located(source)
    with pytest.raises(OpError) as e:
        build_gradient(module, "f")
    assert e.value.message == f"'rlx-grad' cannot differentiate 'mir.scan': {message}"
    assert op_position(e.value.op).line == line_of(source, "mir.scan")


def test_a_second_order_gradient_through_a_scan_is_a_located_error():
    """`mir.scan_backward` has no rule yet: the error points at the scan it came from."""
    module, inputs = rnn(with_bcasts=False)
    prepared(module)
    build_gradient(module, "f")
    grad = find_function(module, "f_grad")
    only = grad.clone()
    only.sym_name = type(only.sym_name)("g")
    ret = only.body.block.last_op
    ret.operands = [ret.operands[-1]]  # the gradient of xs
    only.update_function_type()
    module.body.block.add_op(only)
    with pytest.raises(OpError, match=r"^'rlx-grad' no VJP rule for 'mir.scan_backward'$"):
        build_gradient(module, "g", wrt=["0"])


# convert-scans-for-ad and materialize-scan-bcasts ------------------------------------------


def test_convert_scans_for_ad_forces_save_trajectory():
    """RLX's convert_scans_for_ad_forces_save_trajectory_true: the final carry is the last
    trajectory row, and the values do not change."""
    b = GraphBuilder("f")
    init = b.input("init", [2], "f32")
    xs = b.input("xs", [3, 2], "f32")
    b.output(b.reduce(b.scan(init, lambda rb, c, x: rb.add(c, x), 3, xs=[xs]), kind="sum", axes=[0]))
    module = b.module()
    inputs = [rand(2).astype(np.float32), rand(3, 2).astype(np.float32)]
    before = run_function(module, "f", inputs)
    prepared(module)
    (scan,) = ops_of(module, ScanOp)
    assert scan.saves_trajectory and scan.outputs[0].type.get_shape() == (3, 2)
    np.testing.assert_array_equal(run_function(module, "f", inputs)[0], before[0])


@pytest.mark.parametrize("num_checkpoints", [None, 2])
def test_the_final_carry_is_the_last_row_of_a_checkpointed_trajectory(num_checkpoints):
    """With K checkpoints the last row is K - 1 (RLX narrows row length - 1, out of range)."""
    b = GraphBuilder("f")
    init = b.input("init", [DYNAMIC, 2, DYNAMIC], "f32")  # two ? dims: no reshape spells the carry
    b.output(b.scan(init, lambda rb, c: rb.sin(c), 5, num_checkpoints=num_checkpoints))
    module = b.module()
    x = rand(3, 2, 4).astype(np.float32)
    before = run_function(module, "f", [x])[0]
    prepared(module)
    (scan,) = ops_of(module, ScanOp)
    assert scan.outputs[0].type.get_shape()[0] == (num_checkpoints or 5)
    np.testing.assert_array_equal(run_function(module, "f", [x])[0], before)


@pytest.mark.parametrize("dtype", ["f32", "bf16", "i32"])
def test_bcasts_of_any_dtype_become_xs_with_the_same_values(dtype):
    """RLX builds its ones constant in f32/f64 only and panics otherwise."""
    b = GraphBuilder("f")
    init = b.input("init", [3], dtype)
    w = b.input("w", [DYNAMIC], dtype)
    b.output(b.scan(init, lambda rb, c, v: rb.add(c, v), 4, bcasts=[w]))
    module = b.module()
    np_dtype = {"f32": np.float32, "bf16": None, "i32": np.int32}[dtype]
    if np_dtype is None:
        import ml_dtypes

        np_dtype = ml_dtypes.bfloat16
    inputs = [np.arange(3).astype(np_dtype), np.array([1, 2, 3]).astype(np_dtype)]
    before = run_function(module, "f", inputs)[0]
    prepared(module)
    (scan,) = ops_of(module, ScanOp)
    assert not scan.bcasts and len(scan.xs) == 1 and scan.xs[0].type.get_shape()[0] == 4
    np.testing.assert_array_equal(run_function(module, "f", inputs)[0], before)


# Custom functions -------------------------------------------------------------------------


def square_fn(with_vjp: str | None, with_jvp: bool = False):
    """`sum(custom_fn(x -> x * x))`; the vjp body is `sin(dy)` (deliberately not the
    derivative, RLX's custom_fn_vjp_body_is_inlined_into_bwd) or `2 x dy` (the true one)."""
    vjps = {
        "sin": lambda rb, x, y, dy: rb.sin(dy),
        "true": lambda rb, x, y, dy: rb.mul(rb.add(x, x), dy),
        None: None,
    }
    jvp = (lambda rb, x, y, tx: rb.mul(rb.add(x, x), tx)) if with_jvp else None
    b = GraphBuilder("f")
    x = b.param("x", [4], "f64")
    y = b.custom_fn([x], lambda rb, v: rb.mul(v, v), vjps[with_vjp], jvp)
    b.output(b.mul(y, b.constant(np.array([1.0, 2.0, 3.0, 4.0]), "f64")))
    return b.module()


def test_a_custom_fn_vjp_body_is_used_even_when_it_is_not_the_derivative():
    module = prepared(square_fn("sin"))
    assert len(ops_of(module, CustomFnOp)) == 1  # it has a vjp body: not inlined
    build_gradient(module, "f")
    grad = find_function(module, "f_grad")
    assert [op.name for op in grad.body.block.ops if op.name == "mir.sin"] == ["mir.sin"]  # inlined
    x, d_output = rand(4), rand(4)
    _, dx = run_function(module, "f_grad", [x, d_output])
    np.testing.assert_allclose(dx, np.sin(d_output * [1.0, 2.0, 3.0, 4.0]), rtol=1e-12)
    true = numerical_vjp(module_function(module, "f"), [x], 0, d_output)
    assert not np.allclose(dx, true, rtol=1e-3)


def test_a_custom_fn_with_the_true_vjp_body_matches_central_differences():
    module = prepared(square_fn("true"))
    check_gradients(module, "f", [rand(4)], [0])


@pytest.mark.parametrize("with_jvp", [False, True], ids=["forward-only", "jvp-only"])
def test_a_custom_fn_without_a_vjp_body_is_inlined_and_differentiated(with_jvp):
    """RLX's custom_fn_without_vjp_inlines_fwd_body_for_autodiff; with a jvp body only, RLX
    does not inline and its VJP panics."""
    module = prepared(square_fn(None, with_jvp))
    assert not ops_of(module, CustomFnOp)
    check_gradients(module, "f", [rand(4)], [0])


def test_a_custom_fn_with_several_results_gets_zero_cotangents_for_unused_ones():
    """forward (x, w) -> (x * w, sin x, cos w); only the first two reach the loss."""
    b = GraphBuilder("f")
    x, w = b.param("x", [3], "f64"), b.param("w", [3], "f64")

    def vjp(rb, x, w, p, s, c, dp, ds, dc):
        dx = rb.add(rb.mul(dp, w), rb.mul(ds, rb.cos(x)))
        dw = rb.sub(rb.mul(dp, x), rb.mul(dc, rb.sin(w)))
        return dx, dw

    p, s, _ = b.custom_fn_multi([x, w], lambda rb, x, w: (rb.mul(x, w), rb.sin(x), rb.cos(w)), vjp)
    b.output(b.add(sum_of_squares(b, p), sum_of_squares(b, s)))
    module = prepared(b.module())
    check_gradients(module, "f", [rand(3), rand(3)], [0, 1])


def test_a_custom_fn_inside_a_scan_body():
    b = GraphBuilder("f")
    h0 = b.param("h0", [3], "f64")
    xs = b.param("xs", [3, 3], "f64")

    def body(rb, h, x):
        return rb.custom_fn([h, x], lambda fb, a, c: fb.sin(fb.mul(a, c)))

    b.output(sum_of_squares(b, b.scan(h0, body, 3, xs=[xs])))
    module = prepared(b.module())
    assert not ops_of(module, CustomFnOp)
    check_gradients(module, "f", [rand(3) + 1, rand(3, 3)], [0, 1])


def test_the_prepare_steps_of_structured_ops_are_implemented_in_order():
    names = [step.name for step in PREPARE_STEPS]
    i = names.index("inline-custom-fn")
    assert names[i : i + 3] == ["inline-custom-fn", "materialize-scan-bcasts", "convert-scans-for-ad"]
    assert all(PREPARE_STEPS[n].pending is None for n in names[i : i + 3])


def test_the_training_example_uses_rlx_train_step_and_lowers_the_loss():
    import importlib.util

    spec = importlib.util.spec_from_file_location("train_rnn_scan", EXAMPLE.with_name("train_rnn_scan.py"))
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    module = example.train_step_module(0.5)
    assert len(ops_of(module, ScanBackwardOp, "rnn_loss_train_step")) == 1
    history = example.train(3, 0.5)
    assert all(later < earlier for earlier, later in zip(history, history[1:])), history
