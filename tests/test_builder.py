"""The Python builder API and the graph conventions it produces."""

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.ir.graph import graph_args, random_inputs
from rlx_xdsl.run import run_function


def _mlp():
    b = GraphBuilder("mlp")
    x = b.input("x", [2, 3])
    bias = b.param("bias", [3])
    y = b.relu(b.add(x, bias))
    b.output(y, b.cast(y, "f16"))
    return b.module()


def test_arguments_carry_names_and_param_flags():
    module = _mlp()
    module.verify()
    (f,) = module.ops
    args = graph_args(f)
    assert [(a.name, a.is_param) for a in args] == [("x", False), ("bias", True)]
    text = str(module)
    assert '%bias: tensor<3xf32> {rlx.name = "bias", rlx.param}' in text


def test_result_types_are_inferred():
    module = _mlp()
    (f,) = module.ops
    assert [str(t) for t in f.function_type.outputs] == ["tensor<2x3xf32>", "tensor<2x3xf16>"]


def test_positional_names_without_rlx_name():
    module = parse_module(
        "func.func @f(%a: tensor<2xf32>, %b: tensor<2xf32> {rlx.param}) -> tensor<2xf32> {\n"
        "  %0 = mir.add %a, %b : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
        "  func.return %0 : tensor<2xf32>\n}\n"
    )
    (f,) = module.ops
    assert [(a.name, a.is_param) for a in graph_args(f)] == [("arg0", False), ("arg1", True)]


def test_built_graph_runs_and_matches_numpy():
    module = _mlp()
    inputs = random_inputs(module.ops.first, seed=3)
    out, half = run_function(module, "mlp", inputs)
    np.testing.assert_allclose(out, np.maximum(inputs[0] + inputs[1], 0))
    assert half.dtype == np.float16


def test_random_inputs_are_deterministic():
    f = _mlp().ops.first
    a = random_inputs(f, seed=5)
    b = random_inputs(f, seed=5)
    c = random_inputs(f, seed=6)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])


def test_unknown_op_is_an_attribute_error():
    b = GraphBuilder()
    with pytest.raises(AttributeError, match="no MIR op named 'frobnicate'"):
        b.frobnicate


def test_output_is_required():
    b = GraphBuilder()
    b.input("x", [1])
    with pytest.raises(ValueError, match="call output"):
        b.module()


def test_constant_from_numpy():
    b = GraphBuilder()
    c = b.constant(np.arange(6, dtype=np.int32).reshape(2, 3))
    assert c.type == TensorType(i32, [2, 3])
    d = b.constant(1.5)
    assert d.type == TensorType(f32, [])
    b.output(c, d)
    out_c, out_d = run_function(b.module(), "main", [])
    np.testing.assert_array_equal(out_c, np.arange(6).reshape(2, 3))
    assert out_d == np.float32(1.5)


def test_argument_names_valid_in_ssa_syntax_become_value_names():
    """`layers.0.wq` prints as `%layers.0.wq`; names SSA syntax rejects fall back to numbers."""
    b = GraphBuilder("f")
    names = ["layers.0.wq", "$scale-1", "0.bias", "has space"]
    args = [b.param(name, [2]) for name in names]
    b.output(b.add(b.add(args[0], args[1]), b.add(args[2], args[3])))
    module = b.module()
    text = str(module)
    signature = text.splitlines()[1]
    printed = ["%layers.0.wq", "%$scale-1", "%0", "%1"]
    for value, name in zip(printed, names):
        assert f'{value}: tensor<2xf32> {{rlx.name = "{name}", rlx.param}}' in signature
    reparsed = parse_module(text)
    assert [a.name for a in graph_args(reparsed.ops.first)] == names
    assert str(reparsed) == text


def test_module_twice_returns_the_same_module():
    b = GraphBuilder("f")
    b.output(b.neg(b.input("x", [2])))
    module = b.module()
    assert b.module() is module and b.function() is module.ops.first
    module.verify()
    with pytest.raises(ValueError, match="already built"):
        b.output(b.input("y", [2]))


def test_run_function_takes_inputs_by_name():
    b = GraphBuilder("f")
    x, w = b.input("x", [2]), b.param("w", [2])
    b.output(b.sub(x, w))
    module = b.module()
    x_value, w_value = np.float32([5, 7]), np.float32([1, 2])
    expected = x_value - w_value
    np.testing.assert_array_equal(run_function(module, "f", {"w": w_value, "x": x_value})[0], expected)
    with pytest.raises(KeyError, match="no value for argument w of @f"):
        run_function(module, "f", {"x": x_value})
    with pytest.raises(KeyError, match=r"@f has no argument 'z' \(arguments: x, w\)"):
        run_function(module, "f", {"x": x_value, "w": w_value, "z": x_value})
