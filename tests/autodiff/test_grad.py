"""`rlx-grad` itself: the output convention, wrt resolution, strict and training modes,
accumulation, and the located errors (rules are checked in `test_rules.py`)."""

from __future__ import annotations

from io import StringIO

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from xdsl.dialects import func
from xdsl.printer import Printer
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.autodiff.grad import GradPass, Loss, Mode, build_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.graph import argument_names, find_function
from rlx_xdsl.ir.locations import op_position
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import check_gradients, check_vjp, module_function

RNG = np.random.default_rng(5)


def rand(*shape):
    return RNG.standard_normal(shape)


def located(source: str, name: str = "input.mlir"):
    """Parse with source locations, as rlx-opt does."""
    module, _ = parse_source(make_context(), source, name)
    return module


def text(module) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


def mlp_module():
    """loss = sum((x @ w + b)^2), aux = the pre-activation; w and b are params."""
    b = GraphBuilder("loss")
    x = b.input("x", [3, 4], "f64")
    w = b.param("w", [4, 2], "f64")
    bias = b.param("b", [2], "f64")
    h = b.add(b.matmul(x, w), bias)
    b.output(b.reduce(b.mul(h, h), kind="sum", axes=[0, 1]), h)
    return b.module()


# The output convention ------------------------------------------------------------------


def test_grad_function_returns_loss_aux_then_gradients_and_takes_d_output_last():
    module = mlp_module()
    grad = build_gradient(module, "loss")
    assert grad.sym_name.data == "loss_grad"
    assert argument_names(grad) == ["x", "w", "b", "d_output"]
    types = grad.function_type
    forward = find_function(module, "loss").function_type
    assert list(types.inputs)[:3] == list(forward.inputs) and types.inputs.data[3] == forward.outputs.data[0]
    assert list(types.outputs) == [*forward.outputs, forward.inputs.data[1], forward.inputs.data[2]]


def test_the_gradients_match_central_differences_and_the_aux_output_is_passed_through():
    module = mlp_module()
    inputs = [rand(3, 4), rand(4, 2), rand(2)]
    check_gradients(module, "loss", inputs, [1, 2], cotangent=np.array(1.0))


def test_loss_drop_returns_aux_and_gradients_only_and_they_match_loss_keep():
    """`loss=drop` is RLX's `grad()`: `grad_with_loss` without its first output."""
    inputs = [rand(3, 4), rand(4, 2), rand(2), np.array(1.3)]
    keep_module, drop_module = mlp_module(), mlp_module()
    GradPass(func="loss").apply(make_context(), keep_module)
    GradPass(func="loss", loss="drop").apply(make_context(), drop_module)
    drop = find_function(drop_module, "loss_grad")
    forward = find_function(drop_module, "loss").function_type
    assert argument_names(drop) == ["x", "w", "b", "d_output"]
    assert list(drop.function_type.outputs) == [forward.outputs.data[1], *forward.inputs.data[1:]]
    with_loss = run_function(keep_module, "loss_grad", inputs)
    without = run_function(drop_module, "loss_grad", inputs)
    assert len(without) == len(with_loss) - 1
    for got, want in zip(without, with_loss[1:], strict=True):
        np.testing.assert_array_equal(got, want)
    check_vjp(without[1], module_function(mlp_module(), "loss"), inputs[:3], 1, inputs[3])


def test_loss_drop_removes_the_ops_only_the_loss_needed():
    module = mlp_module()
    build_gradient(module, "loss", loss=Loss.DROP)
    names = [op.name for op in find_function(module, "loss_grad").walk()]
    assert "mir.reduce" in names  # the gradient of b unbroadcasts dh
    forward_square = [op for op in find_function(module, "loss_grad").walk() if op.name == "mir.mul"]
    assert all(op.operands[0] is not op.operands[1] for op in forward_square)  # h * h is gone


def test_cross_entropy_with_ignore_index_matches_torchs_mean_and_its_gradient():
    """PyTorch's mean over the rows not ignored, built from the per-row op; `loss=drop`."""
    b = GraphBuilder("loss")
    x = b.param("x", [5, 4], "f64")
    labels = b.input("labels", [5, 1], "i64")
    per_row = b.softmax_cross_entropy_with_logits(x, labels, ignore_index=-100)
    kept = b.compare(labels, b.constant(-100, labels.type.element_type), "ne")
    kept = b.cast(kept, per_row.type.element_type)
    b.output(b.div(b.reduce(per_row, kind="sum", axes=[0]), b.reduce(kept, kind="sum", axes=[0, 1])))
    module = b.module()
    GradPass(func="loss", loss="drop").apply(make_context(), module)
    logits, ids = rand(5, 4), np.array([[1], [-100], [3], [0], [-100]])
    (d_x,) = run_function(module, "loss_grad", [logits, ids, np.array(1.0)])
    (loss,) = run_function(module, "loss", [logits, ids])
    x_torch = torch.from_numpy(logits).requires_grad_()
    expected = F.cross_entropy(x_torch, torch.from_numpy(ids[:, 0]), ignore_index=-100)
    expected.backward()
    np.testing.assert_allclose(loss, expected.item(), rtol=1e-12)
    np.testing.assert_allclose(d_x, x_torch.grad.numpy(), rtol=1e-12, atol=1e-15)
    assert np.all(d_x[[1, 4]] == 0)


def test_the_forward_function_is_left_unchanged():
    module = mlp_module()
    before = text(find_function(module, "loss"))
    build_gradient(module, "loss")
    assert text(find_function(module, "loss")) == before


def test_d_output_scales_the_gradients_linearly():
    module = mlp_module()
    build_gradient(module, "loss")
    inputs = [rand(3, 4), rand(4, 2), rand(2)]
    *_, dw1, db1 = run_function(module, "loss_grad", [*inputs, np.array(1.0)])
    *_, dw3, db3 = run_function(module, "loss_grad", [*inputs, np.array(-3.0)])
    np.testing.assert_allclose(dw3, -3 * dw1)
    np.testing.assert_allclose(db3, -3 * db1)


def test_a_loss_of_any_shape_is_seeded_with_d_output_of_its_type():
    b = GraphBuilder("f")
    x = b.input("x", [2, 3], "f64")
    b.output(b.tanh(b.mul(x, x)))
    module = b.module()
    check_gradients(module, "f", [rand(2, 3)], [0])


# wrt ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("wrt", "expected"), [(("w",), [1]), (("2", "x"), [2, 0]), ((), [1, 2])])
def test_wrt_names_arguments_by_name_or_position_and_defaults_to_the_params(wrt, expected):
    module = mlp_module()
    inputs = [rand(3, 4), rand(4, 2), rand(2)]
    build_gradient(module, "loss", wrt)
    results = run_function(module, "loss_grad", [*inputs, np.array(1.0)])
    forward = module_function(module, "loss")
    for gradient, index in zip(results[2:], expected, strict=True):
        check_vjp(gradient, forward, inputs, index, np.array(1.0))


def test_unknown_wrt_names_are_reported_with_the_arguments_there_are():
    module = mlp_module()
    with pytest.raises(OpError, match=r"@loss has no argument 'v' \(its arguments: x, w, b") as e:
        build_gradient(module, "loss", ["v"])
    assert e.value.op is SymbolTable.lookup_symbol(module, "loss")  # located at the function, not the module


def test_without_wrt_a_function_without_params_is_an_error():
    b = GraphBuilder("f")
    b.output(b.exp(b.input("x", [2])))
    module = b.module()
    with pytest.raises(OpError, match="@f has no rlx.param argument") as e:
        build_gradient(module, "f")
    assert e.value.op is SymbolTable.lookup_symbol(module, "f")


def test_an_unknown_function_is_reported_with_the_functions_there_are():
    with pytest.raises(PassFailedException, match=r"no function named @nope \(functions: @loss\)"):
        build_gradient(mlp_module(), "nope")


def test_a_second_gradient_of_the_same_function_is_refused():
    module = mlp_module()
    build_gradient(module, "loss")
    with pytest.raises(OpError, match="cannot add @loss_grad: the symbol already exists"):
        build_gradient(module, "loss")


def test_the_loss_must_be_floating_point():
    b = GraphBuilder("f")
    x = b.input("x", [2], "f64")
    b.output(b.cast(x, "i32"))
    with pytest.raises(
        OpError, match=r"the loss \(result #0\) must be a floating-point tensor, got tensor<2xi32>"
    ):
        build_gradient(b.module(), "f", ["x"])


# Accumulation, integer values -------------------------------------------------------------


def test_gradients_of_values_with_several_uses_are_summed():
    """x feeds the loss three ways (and twice into one op); each path adds its share."""
    b = GraphBuilder("f")
    x = b.input("x", [3], "f64")
    y = b.mul(x, x)
    b.output(b.reduce(b.add(b.mul(y, x), b.sin(x)), kind="sum", axes=[0]))
    module = b.module()
    (gradient,) = check_gradients(module, "f", [np.array([0.5, -1.0, 2.0])], [0], cotangent=np.array(1.0))
    x0 = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(gradient, 3 * x0**2 + np.cos(x0))


def test_integer_values_carry_no_gradient():
    """A round trip through i32 cuts the path: strict mode says where."""
    b = GraphBuilder("f")
    x = b.input("x", [3], "f32")
    b.output(b.cast(b.cast(x, "i32"), "f32"))
    with pytest.raises(
        OpError, match=r"paths to the loss are cut by 'mir.cast' \(its results carry no gradient\)"
    ) as e:
        build_gradient(b.module(), "f", ["x"])
    assert e.value.op.name == "mir.cast"


def test_index_operands_carry_no_gradient():
    b = GraphBuilder("f")
    table = b.input("table", [4, 2], "f64")
    ids = b.input("ids", [3], "f64")
    b.output(b.gather(table, ids, axis=0))
    with pytest.raises(OpError, match="cut by the index operand of 'mir.gather'"):
        build_gradient(b.module(), "f", ["ids"])


# Strict and training --------------------------------------------------------------------------


def unreached_module():
    """`w` only feeds the aux output, `k` is an integer, `u` is unused."""
    b = GraphBuilder("f")
    x = b.param("x", [2], "f64")
    w = b.param("w", [2], "f64")
    b.param("k", [2], "i32")
    b.param("u", [2, 2], "f64")
    b.output(b.reduce(b.exp(x), kind="sum", axes=[0]), b.mul(w, w))
    return b.module()


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("w", "the loss does not depend on it"),
        ("k", "its type tensor<2xi32> carries no gradient"),
        ("u", "it is not used"),
    ],
)
def test_strict_mode_names_the_argument_no_gradient_reaches_and_why(name, reason):
    with pytest.raises(OpError) as e:
        build_gradient(unreached_module(), "f", ["x", name])
    assert str(e.value) == (
        f"'rlx-grad' no gradient reaches argument '{name}' of @f: {reason} "
        "(mode=training returns zeros instead)"
    )
    assert isinstance(e.value.op, func.FuncOp)


def test_training_mode_gives_unreached_arguments_zeros_of_their_type():
    module = unreached_module()
    grad = build_gradient(module, "f", mode=Mode.TRAINING)
    assert [str(t) for t in grad.function_type.outputs.data[2:]] == [
        "tensor<2xf64>", "tensor<2xf64>", "tensor<2xi32>", "tensor<2x2xf64>",
    ]  # fmt: skip
    x = np.array([0.5, -1.0])
    outputs = run_function(module, "f_grad", [x, x, np.ones(2, np.int32), np.ones((2, 2)), np.array(1.0)])
    np.testing.assert_allclose(outputs[2], np.exp(x))
    for zero in outputs[3:]:
        assert not zero.any()


def test_training_zeros_of_a_dynamic_argument_take_its_run_time_shape():
    module = parse_module(
        """
        func.func @f(%x: tensor<?x3xf32> {rlx.param}, %w: tensor<?x2xf32> {rlx.param}) -> tensor<f32> {
          %0 = mir.reduce sum %x axes = [0, 1] : (tensor<?x3xf32>) -> tensor<f32>
          func.return %0 : tensor<f32>
        }
        """
    )
    build_gradient(module, "f", mode=Mode.TRAINING)
    w = np.full((5, 2), np.nan, np.float32)
    *_, dx, dw = run_function(module, "f_grad", [np.ones((4, 3), np.float32), w, np.array(1.0, np.float32)])
    np.testing.assert_array_equal(dx, np.ones((4, 3)))
    np.testing.assert_array_equal(dw, np.zeros((5, 2)))  # no NaN leaks from w


def test_the_pass_parses_its_mode():
    with pytest.raises(PassFailedException, match="mode must be strict or training, got 'lenient'"):
        GradPass(func="loss", mode="lenient").apply(make_context(), mlp_module())


def test_the_pass_parses_its_loss_option():
    with pytest.raises(PassFailedException, match="loss must be keep or drop, got 'false'"):
        GradPass(func="loss", loss="false").apply(make_context(), mlp_module())


# Ops without a rule, rules that cannot handle an instance ---------------------------------


def scan_module(differentiate_the_carry: bool):
    """`f(x, xs) = sum(scan(c * x_t) * x)`, the scan's carry starting at `x` or at ones."""
    b = GraphBuilder("f")
    x = b.param("x", [3], "f64")
    xs = b.input("xs", [2, 3], "f64")
    init = x if differentiate_the_carry else b.constant(np.ones(3), "f64")
    carried = b.scan(init, lambda rb, c, t: rb.mul(c, t), 2, xs=[xs])
    b.output(b.reduce(b.mul(carried, x), kind="sum", axes=[0]))
    return b.module()


def if_module():
    """`f(x, p) = sum(if p then sin(x) else x)`: `mir.if` has no VJP rule (prepare-ad removes it)."""
    b = GraphBuilder("f")
    x = b.param("x", [3], "f64")
    p = b.input("p", [], "i1")
    chosen = b.if_(p, [x], lambda rb, v: rb.sin(v), lambda rb, v: v)
    b.output(b.reduce(chosen, kind="sum", axes=[0]))
    return b.module()


def test_an_op_without_a_rule_on_the_path_is_a_located_error_naming_it():
    source = text(if_module())
    module = located(source)
    with pytest.raises(OpError, match=r"^'rlx-grad' no VJP rule for 'mir.if'") as e:
        build_gradient(module, "f")
    assert e.value.op.name == "mir.if"
    if_line = next(i for i, line in enumerate(source.splitlines(), 1) if "mir.if" in line)
    assert op_position(e.value.op).line == if_line
    assert len(list(module.ops)) == 1  # nothing was added


def test_an_op_without_a_rule_off_the_path_is_fine():
    """The scan only sees `xs` and a constant, which are not differentiated."""
    check_gradients(scan_module(False), "f", [rand(3), rand(2, 3)], [0])


def test_a_rule_that_cannot_handle_an_instance_says_why_at_the_op():
    module = located(
        """
        func.func @f(%x: tensor<?x5xf32> {rlx.param}) -> tensor<2x2xf32> {
          %0 = mir.narrow %x axis = 0 start = 1 len = 2 : (tensor<?x5xf32>) -> tensor<2x5xf32>
          %1 = mir.narrow %0 axis = 1 start = 1 len = 2 : (tensor<2x5xf32>) -> tensor<2x2xf32>
          func.return %1 : tensor<2x2xf32>
        }
        """,
        "narrow.mlir",
    )
    with pytest.raises(
        OpError,
        match=r"'rlx-grad' cannot differentiate 'mir.narrow': the narrowed axis 0 must be static to pad the "
        "gradient back",
    ) as e:
        build_gradient(module, "f")
    assert op_position(e.value.op).line == 3
