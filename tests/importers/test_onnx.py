"""The ONNX importer: small models built with `onnx.helper`, imported, and run by the
interpreter against `onnx.reference.ReferenceEvaluator` (the independent oracle)."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto as T
from onnx import helper, numpy_helper
from onnx.reference import ReferenceEvaluator
from xdsl.dialects.builtin import NameLoc

from rlx_xdsl.context import parse_module
from rlx_xdsl.importers.errors import ImportFailure
from rlx_xdsl.importers.onnx import import_model, initializers
from rlx_xdsl.ir.graph import argument_name, find_function, is_param
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.tools import import_onnx

RNG = np.random.default_rng(0)


def weight(name: str, *shape: int, dtype=np.float32) -> onnx.TensorProto:
    return numpy_helper.from_array(RNG.standard_normal(shape).astype(dtype), name)


def model(nodes, inputs, outputs, inits=(), opset=17) -> onnx.ModelProto:
    graph = helper.make_graph(nodes, "g", inputs, outputs, list(inits))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(m)
    return m


def run(m: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    module = import_model(m)
    f = find_function(module)
    params = initializers(m)
    args = [(params if is_param(f, i) else feeds)[argument_name(f, i)] for i in range(len(f.args))]
    return run_function(module, None, args)


def expect_same(m, feeds, atol=1e-5):
    with np.errstate(all="ignore"):  # the reference's own inf/NaN arithmetic
        expected = ReferenceEvaluator(m).run(None, feeds)
    got = run(m, feeds)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        assert g.shape == e.shape
        np.testing.assert_allclose(g, e, rtol=1e-5, atol=atol)


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


@pytest.fixture(scope="module")
def mlp() -> onnx.ModelProto:
    nodes = [
        helper.make_node("MatMul", ["x", "w1"], ["h"], name="fc1"),
        helper.make_node("Add", ["h", "b1"], ["hb"], name="bias1"),
        helper.make_node("Relu", ["hb"], ["r"], name="act"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2", transB=1, alpha=0.5),
        helper.make_node("Softmax", ["logits"], ["y"], name="probs", axis=-1),
    ]
    inits = [weight("w1", 6, 10), weight("b1", 10), weight("w2", 4, 10), weight("b2", 4)]
    return model(nodes, [vi("x", T.FLOAT, ["N", 6])], [vi("y", T.FLOAT, ["N", 4])], inits)


def test_mlp_matches_the_reference_at_several_batch_sizes(mlp):
    for batch in (1, 3):
        expect_same(mlp, {"x": RNG.standard_normal((batch, 6)).astype(np.float32)})


def test_initializers_are_named_parameters_and_symbolic_dims_are_dynamic(mlp):
    f = find_function(import_model(mlp))
    params = [argument_name(f, i) for i in range(len(f.args)) if is_param(f, i)]
    assert sorted(params) == ["b1", "b2", "w1", "w2"]
    assert f.args[0].type.get_shape() == (DYNAMIC, 6)


def test_ops_are_located_at_their_node_names(mlp):
    module = import_model(mlp)
    ops = find_function(module).body.block.ops
    names = {op.location.desc.data for op in ops if isinstance(op.location, NameLoc)}
    assert {"fc1", "bias1", "act", "fc2", "probs"} <= names


def test_imported_module_prints_and_parses_back(mlp):
    text = print_ir(import_model(mlp))
    assert print_ir(parse_module(text)) == text


def test_conv_net_matches_the_reference():
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c", "g", "beta", "mean", "var"], ["n"], epsilon=1e-3),
        helper.make_node("Relu", ["n"], ["r"]),
        helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("AveragePool", ["p"], ["a"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("GlobalAveragePool", ["a"], ["gp"]),
        helper.make_node("Flatten", ["gp"], ["f"]),
        helper.make_node("Gemm", ["f", "fw"], ["y"]),
    ]
    var = numpy_helper.from_array(RNG.uniform(0.5, 2, 4).astype(np.float32), "var")
    inits = [weight("w", 4, 3, 3, 3), weight("b", 4), weight("g", 4), weight("beta", 4), weight("mean", 4), var]
    inits.append(weight("fw", 4, 5))
    m = model(nodes, [vi("x", T.FLOAT, [2, 3, 8, 8])], [vi("y", T.FLOAT, [2, 5])], inits)
    expect_same(m, {"x": RNG.standard_normal((2, 3, 8, 8)).astype(np.float32)})


def test_shape_ops_and_folded_shape_arithmetic_match_the_reference():
    """Shape -> Gather -> Concat -> Reshape is folded at import time; the rest runs."""
    const = helper.make_node
    nodes = [
        const("Shape", ["x"], ["s"]),
        const("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.int64))),
        const("Gather", ["s", "zero"], ["rows"]),
        const("Constant", [], ["minus1"], value=numpy_helper.from_array(np.array([-1], np.int64))),
        const("Unsqueeze", ["rows", "ax0"], ["rows1"]),
        const("Concat", ["rows1", "minus1"], ["shape"], axis=0),
        const("Transpose", ["x"], ["xt"], perm=[0, 2, 1]),
        const("Reshape", ["xt", "shape"], ["flat"]),
        const("Slice", ["flat", "starts", "ends", "axes"], ["sl"]),
        const("Split", ["sl", "parts"], ["s1", "s2"], axis=1),
        const("Concat", ["s2", "s1"], ["swapped"], axis=1),
        const("ReduceMean", ["swapped", "ax1"], ["m"], keepdims=1),
        const("Sub", ["swapped", "m"], ["centred"]),
        const("LayerNormalization", ["centred", "lg", "lb"], ["ln"], epsilon=1e-5),
        const("Less", ["ln", "half"], ["lt"]),
        const("Where", ["lt", "ln", "half"], ["w"]),
        const("LogSoftmax", ["w"], ["ls"], axis=1),
        const("Gather", ["ls", "ids"], ["picked"], axis=1),
        const("Unsqueeze", ["picked", "ax0"], ["u"]),
        const("Squeeze", ["u", "ax0"], ["sq"]),
        const("Cast", ["sq"], ["d"], to=T.DOUBLE),
        const("Clip", ["x", "lo", "hi"], ["clipped"]),
        const("LeakyRelu", ["clipped"], ["lr"], alpha=0.2),
        const("Expand", ["bias", "big"], ["e"]),
        const("Add", ["lr", "e"], ["z"]),
    ]
    inits = [
        numpy_helper.from_array(np.array([0], np.int64), "ax0"),
        numpy_helper.from_array(np.array([1], np.int64), "ax1"),
        numpy_helper.from_array(np.array([1], np.int64), "starts"),
        numpy_helper.from_array(np.array([100], np.int64), "ends"),
        numpy_helper.from_array(np.array([1], np.int64), "axes"),
        numpy_helper.from_array(np.array([4, 7], np.int64), "parts"),
        numpy_helper.from_array(np.array([2, 3, 4], np.int64), "big"),
        numpy_helper.from_array(np.float32(0.5), "half"),
        numpy_helper.from_array(np.float32(-0.3), "lo"),
        numpy_helper.from_array(np.float32(0.4), "hi"),
        weight("lg", 11),
        weight("lb", 11),
        weight("bias", 3, 1),
    ]
    inputs = [vi("x", T.FLOAT, [2, 3, 4]), vi("ids", T.INT64, [5])]
    outputs = [vi("d", T.DOUBLE, [2, 5]), vi("z", T.FLOAT, [2, 3, 4])]
    m = model(nodes, inputs, outputs, inits, opset=18)  # ReduceMean's axes input
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    expect_same(m, {"x": x, "ids": np.array([0, -1, 3, -11, 10], np.int64)})
    ops = [op for op in import_model(m).walk() if op.name in ("mir.gather", "mir.reshape")]
    assert [op.name for op in ops].count("mir.gather") == 1  # only the run-time `ids` gather
    assert any(op.name == "mir.reshape" and op.new_shape.get_values() == (2, -1) for op in ops)


def test_activation_and_elementwise_rules_match_the_reference():
    ops = ["Floor", "Ceil", "Sign", "Softsign", "HardSwish", "Softplus", "Elu", "HardSigmoid", "Round", "Reciprocal"]
    nodes = [helper.make_node(op, ["x"], [f"y{i}"]) for i, op in enumerate(ops)]
    nodes += [
        helper.make_node("PRelu", ["x", "slope"], ["prelu"]),
        helper.make_node("IsInf", ["x"], ["inf"], detect_negative=0),
        helper.make_node("IsNaN", ["x"], ["nan"]),
        helper.make_node("ArgMax", ["x"], ["argmax"], axis=0, keepdims=0),
        helper.make_node("ArgMin", ["x"], ["argmin"], axis=1),
        helper.make_node("Trilu", ["x"], ["upper"], upper=1),
        helper.make_node("ReduceL1", ["x", "ax1"], ["l1"], keepdims=0),
    ]
    outputs = [vi(f"y{i}", T.FLOAT, [3, 4]) for i in range(len(ops))]
    outputs += [vi("prelu", T.FLOAT, [3, 4]), vi("inf", T.BOOL, [3, 4]), vi("nan", T.BOOL, [3, 4])]
    outputs += [vi("argmax", T.INT64, [4]), vi("argmin", T.INT64, [3, 1]), vi("upper", T.FLOAT, [3, 4])]
    outputs.append(vi("l1", T.FLOAT, [3]))
    inits = [weight("slope", 4), numpy_helper.from_array(np.array([1], np.int64), "ax1")]
    m = model(nodes, [vi("x", T.FLOAT, [3, 4])], outputs, inits, opset=18)
    x = np.array([[0.5, -2.5, 1.5, np.inf], [-0.7, 3.2, -np.inf, 2.5], [np.nan, -1.5, 0.0, 7.0]], np.float32)
    x[2, 0] = 4.25  # NaN only for IsNaN below: Arg* order NaN differently in numpy and topk
    expect_same(m, {"x": x})
    nan = x.copy()
    nan[0, 0] = np.nan
    assert run(m, {"x": nan})[len(ops) + 2][0, 0]


def test_gather_counts_negative_run_time_indices_from_the_end():
    """On a static and on a dynamic axis, as the reference does."""
    node = helper.make_node("Gather", ["x", "i"], ["y"], axis=1)
    for width in (4, "w"):
        m = model([node], [vi("x", T.FLOAT, [2, width]), vi("i", T.INT64, [3])], [vi("y", T.FLOAT, [2, 3])])
        x = RNG.standard_normal((2, 4)).astype(np.float32)
        expect_same(m, {"x": x, "i": np.array([-1, 2, -4], np.int64)})


def test_rounding_and_fmod_keep_the_sign_of_zero():
    """Round(-0.5), Ceil(-0.7) and Mod(-4, 2, fmod=1) are -0.0 in the reference (numpy)."""
    ops = ["Round", "Floor", "Ceil"]
    nodes = [helper.make_node(op, ["x"], [f"y{i}"]) for i, op in enumerate(ops)]
    nodes.append(helper.make_node("Mod", ["x", "d"], ["mod"], fmod=1))
    outputs = [vi(name, T.FLOAT, [10]) for name in ("y0", "y1", "y2", "mod")]
    m = model(nodes, [vi("x", T.FLOAT, [10]), vi("d", T.FLOAT, [10])], outputs)
    x = np.array([-0.5, -0.4, -0.7, -0.0, 0.0, 0.3, -1.5, 2.5, -4.0, 4.0], np.float32)
    d = np.array([1, 1, 1, 1, 1, 1, 1, 1, 2, -2], np.float32)
    expected = ReferenceEvaluator(m).run(None, {"x": x, "d": d})
    for got, want in zip(run(m, {"x": x, "d": d}), expected):
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_mod_keeps_pythons_remainder_at_zeros_and_infinite_divisors():
    """Mod(fmod=0) is Python's % (numpy.mod): a zero remainder takes the divisor's sign and
    a finite dividend over an infinite divisor of the other sign gives that divisor."""
    m = model([helper.make_node("Mod", ["x", "d"], ["y"], fmod=0)], [vi("x", T.FLOAT, [9]), vi("d", T.FLOAT, [9])],
              [vi("y", T.FLOAT, [9])])  # fmt: skip
    x = np.array([0.0, -0.0, 4.0, -4.0, -3.0, 3.0, 3.0, np.inf, 1.0], np.float32)
    d = np.array([-2.0, 2.0, -2.0, 2.0, np.inf, np.inf, -np.inf, 2.0, 0.0], np.float32)
    with np.errstate(all="ignore"):
        want = np.mod(x, d)
    (got,) = run(m, {"x": x, "d": d})
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_1d_windows_and_same_padding_match_the_reference():
    """A 1-D Conv and AveragePool counting its padding (height-1 2-D windows), auto_pad
    SAME_LOWER with its odd padding cell explicit (1-D and SAME MaxPool: the node tests)."""
    w = weight("w", 4, 3, 3)
    nodes = [
        helper.make_node("Conv", ["x", "w"], ["c"], auto_pad="SAME_LOWER", strides=[2]),
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[3], pads=[1, 1], count_include_pad=1),
    ]
    outs = [vi("c", T.FLOAT, [2, 4, 4]), vi("a", T.FLOAT, [2, 3, 7])]
    m = model(nodes, [vi("x", T.FLOAT, [2, 3, 7])], outs, [w], opset=19)
    x = RNG.standard_normal((2, 3, 7)).astype(np.float32)
    expected = ReferenceEvaluator(m).run(None, {"x": x, "w": numpy_helper.to_array(w)})
    for got, want in zip(run(m, {"x": x}), expected):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_cumprod_of_integers_wraps_as_numpy_and_lppool_takes_any_p():
    axis = numpy_helper.from_array(np.array(1, np.int64), "axis")
    nodes = [helper.make_node("CumProd", ["i", "axis"], ["c"], exclusive=1),
             helper.make_node("LpPool", ["x"], ["l"], kernel_shape=[2, 2], p=3, pads=[0, 1, 1, 0])]  # fmt: skip
    m = model(nodes, [vi("i", T.INT32, [2, 9]), vi("x", T.FLOAT, [1, 2, 3, 3])],
              [vi("c", T.INT32, [2, 9]), vi("l", T.FLOAT, [1, 2, 3, 3])], [axis], opset=26)  # fmt: skip
    i = RNG.integers(-99, 99, (2, 9)).astype(np.int32)
    x = RNG.standard_normal((1, 2, 3, 3)).astype(np.float32)
    cumprod, lp = run(m, {"i": i, "x": x})
    with np.errstate(over="ignore"):
        np.testing.assert_array_equal(cumprod[:, 1:], np.cumprod(i, axis=1, dtype=np.int32)[:, :-1])
    padded = np.pad(np.abs(x.astype(np.float64)) ** 3, [(0, 0), (0, 0), (0, 1), (1, 0)])
    windows = np.lib.stride_tricks.sliding_window_view(padded, (2, 2), axis=(2, 3)).sum(axis=(-1, -2))
    np.testing.assert_allclose(lp, np.cbrt(windows), rtol=1e-5)


@pytest.mark.parametrize(
    ("equation", "shapes"),
    [("ij,jk", [(2, 3), (3, 4)]), ("...ij,...jk->...ik", [(1, 2, 3), (5, 3, 2)]), ("iij->ji", [(3, 3, 2)]),
     ("bi,bj->", [(2, 3), (2, 4)])],
)  # fmt: skip
def test_einsum_matches_numpy(equation, shapes):
    names = [f"x{i}" for i in range(len(shapes))]
    xs = {n: RNG.standard_normal(s).astype(np.float32) for n, s in zip(names, shapes)}
    want = np.einsum(equation, *xs.values())
    node = helper.make_node("Einsum", names, ["y"], equation=equation)
    m = model([node], [vi(n, T.FLOAT, s) for n, s in zip(names, shapes)], [vi("y", T.FLOAT, want.shape)])
    (got,) = run(m, xs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_quantize_linear_rounds_ties_to_even_and_saturates_per_axis():
    scale = numpy_helper.from_array(np.array([0.5, 2.0], np.float32), "s")
    zero = numpy_helper.from_array(np.array([-3, 100], np.int8), "z")
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=0),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["d"], axis=0)]  # fmt: skip
    m = model(nodes, [vi("x", T.FLOAT, [2, 4])], [vi("q", T.INT8, [2, 4]), vi("d", T.FLOAT, [2, 4])],
              [scale, zero], opset=21)  # fmt: skip
    x = np.array([[0.25, 0.75, -1.25, 99.0], [3.0, 5.0, 60.0, -500.0]], np.float32)
    q, d = run(m, {"x": x})
    s, z = np.array([[0.5], [2.0]], np.float32), np.array([[-3], [100]])
    want = np.clip(np.rint(x / s) + z, -128, 127).astype(np.int8)
    np.testing.assert_array_equal(q, want)
    np.testing.assert_allclose(d, (want.astype(np.float32) - z) * s)


def test_scatter_elements_reduces_duplicates_in_order_and_needs_constant_indices():
    indices = numpy_helper.from_array(np.array([[0, 2, 0], [1, 1, -3]], np.int64), "i")
    node = helper.make_node("ScatterElements", ["d", "i", "u"], ["y"], name="sc", axis=1, reduction="add")
    inputs = [vi("d", T.FLOAT, [2, 3]), vi("u", T.FLOAT, [2, 3])]
    m = model([node], inputs, [vi("y", T.FLOAT, [2, 3])], [indices])
    d, u = RNG.standard_normal((2, 3)).astype(np.float32), RNG.standard_normal((2, 3)).astype(np.float32)
    want = d.copy()
    np.add.at(want, (np.array([[0, 0, 0], [1, 1, 1]]), np.array([[0, 2, 0], [1, 1, 0]])), u)
    np.testing.assert_allclose(run(m, {"d": d, "u": u})[0], want, rtol=1e-6)
    m = model([node], [*inputs, vi("i", T.INT64, [2, 3])], [vi("y", T.FLOAT, [2, 3])])
    with pytest.raises(ImportFailure, match=r"sc.*\(ScatterElements\): indices \(input 1\) must be a constant"):
        import_model(m)


@pytest.mark.parametrize(("start", "end", "step"), [(1, 100, 2), (-1, -100, -1), (4, 0, -3), (2, 2, 5), (0, 3, 1)])
def test_strided_and_reversed_slices_match_numpy(start, end, step):
    consts = [numpy_helper.from_array(np.array([v], np.int64), n) for n, v in (("s", start), ("e", end), ("a", 1), ("k", step))]
    x = RNG.standard_normal((2, 6)).astype(np.float32)
    want = x[:, start:end:step]
    node = helper.make_node("Slice", ["x", "s", "e", "a", "k"], ["y"])
    m = model([node], [vi("x", T.FLOAT, [2, 6])], [vi("y", T.FLOAT, list(want.shape))], consts)
    np.testing.assert_array_equal(run(m, {"x": x})[0], want)


@pytest.mark.parametrize(("a", "b"), [((3,), (3,)), ((3,), (2, 3, 4)), ((2, 4, 3), (3,))])
def test_matmul_of_1d_operands_matches_numpy(a, b):
    x, y = RNG.standard_normal(a).astype(np.float32), RNG.standard_normal(b).astype(np.float32)
    want = np.matmul(x, y)
    node = helper.make_node("MatMul", ["a", "b"], ["y"])
    m = model([node], [vi("a", T.FLOAT, list(a)), vi("b", T.FLOAT, list(b))], [vi("y", T.FLOAT, list(want.shape))])
    np.testing.assert_allclose(run(m, {"a": x, "b": y})[0], want, rtol=1e-5, atol=1e-6)


def test_training_dropout_with_ratio_zero_is_the_identity_and_one_that_drops_is_refused():
    training = numpy_helper.from_array(np.array(True), "t")
    for ratio, refused in ((0.0, False), (0.5, True)):
        r = numpy_helper.from_array(np.array(ratio, np.float32), "r")
        node = helper.make_node("Dropout", ["x", "r", "t"], ["y", "m"], name="drop")
        m = model([node], [vi("x", T.FLOAT, [2, 3])], [vi("y", T.FLOAT, [2, 3]), vi("m", T.BOOL, [2, 3])],
                  [r, training])  # fmt: skip
        if refused:
            with pytest.raises(ImportFailure, match=r"drop.*Dropout in training mode is not supported"):
                import_model(m)
        else:
            expect_same(m, {"x": RNG.standard_normal((2, 3)).astype(np.float32)})


def test_a_range_with_run_time_bounds_names_the_bound_and_imports_once_bound():
    node = helper.make_node("Range", ["s", "l", "d"], ["y"], name="rng")
    scalars = [vi(n, T.INT64, []) for n in ("s", "l", "d")]
    m = model([node], scalars, [vi("y", T.INT64, ["n"])])
    with pytest.raises(ImportFailure, match=r"rng.*\(Range\): a Range's start, on which its length depends, \(input 0\)"):
        import_model(m)
    bound = {"s": np.array(7), "l": np.array(-2), "d": np.array(-3)}
    (got,) = run_function(import_model(m, bind=bound), None, [])
    np.testing.assert_array_equal(got, np.arange(7, -2, -3))


def _resize(mode: str, elem=T.FLOAT) -> onnx.ModelProto:
    scales = numpy_helper.from_array(np.array([1, 1, 2, 2], np.float32), "scales")
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="up", mode=mode)
    return model([node], [vi("x", elem, [1, 1, 2, 3])], [vi("y", elem, [1, 1, 4, 6])], [scales], opset=19)


def test_resize_matches_the_reference_and_a_non_finite_value_spreads_along_its_row():
    x = np.arange(6, dtype=np.float32).reshape(1, 1, 2, 3)
    for mode in ("nearest", "linear", "cubic"):
        expect_same(_resize(mode), {"x": x})
    x[0, 0, 0, 0] = np.inf  # documented in docs/deviations.md: the coefficient matmul gives 0 * inf
    (got,) = run(_resize("linear"), {"x": x})
    (want,) = ReferenceEvaluator(_resize("linear")).run(None, {"x": x})
    assert np.isfinite(want[0, 0, :, 5]).all() and np.isnan(got[0, 0, :, 5]).all()


def test_resize_linear_of_integers_is_a_located_refusal():
    with pytest.raises(ImportFailure, match=r"up.*Resize mode 'linear' of i32 is not supported"):
        import_model(_resize("linear", T.INT32))


def _decoder_model() -> onnx.ModelProto:
    nodes = [helper.make_node("ImageDecoder", ["x"], ["y"], name="the_decoder")]
    return model(nodes, [vi("x", T.UINT8, [3])], [vi("y", T.UINT8, [2, 2, 3])], opset=20)


def test_unsupported_op_names_the_op_and_the_node():
    with pytest.raises(ImportFailure, match=r"node 'the_decoder' \(ImageDecoder\): unsupported ONNX op 'ImageDecoder'"):
        import_model(_decoder_model())


def test_a_malformed_node_is_one_located_error():
    """No checker here: the model lacks MaxPool's required kernel_shape."""
    graph = helper.make_graph(
        [helper.make_node("MaxPool", ["x"], ["y"], name="pool")],
        "g",
        [vi("x", T.FLOAT, [1, 1, 4, 4])],
        [vi("y", T.FLOAT, None)],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ImportFailure, match=r"node 'pool' \(MaxPool\): malformed MaxPool node"):
        import_model(m)


def test_a_missing_weight_is_one_located_error():
    graph = helper.make_graph(
        [helper.make_node("MatMul", ["x", "w"], ["y"], name="fc")],
        "g",
        [vi("x", T.FLOAT, [2, 3])],
        [vi("y", T.FLOAT, [2, 4])],
    )
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    with pytest.raises(ImportFailure, match=r"node 'fc' \(MatMul\): input 'w' is not defined before its use"):
        import_model(m)


def test_an_older_opset_is_converted_by_onnx_version_converter():
    """Opset 11's ReduceSum takes its axes as an attribute and Squeeze as well: both are
    upgraded to opset 13's axes inputs by `onnx.version_converter`, then imported."""
    nodes = [
        helper.make_node("ReduceSum", ["x"], ["s"], axes=[1], keepdims=1),
        helper.make_node("Squeeze", ["s"], ["y"], axes=[1]),
    ]
    m = model(nodes, [vi("x", T.FLOAT, [2, 3, 4])], [vi("y", T.FLOAT, [2, 4])], opset=11)
    x = RNG.standard_normal((2, 3, 4)).astype(np.float32)
    (got,) = run(m, {"x": x})
    np.testing.assert_allclose(got, x.sum(axis=1), rtol=1e-6)


def test_an_older_opset_with_an_op_it_does_not_define_is_refused_at_the_node():
    """Before `onnx.version_converter` (whose own error names no node) sees the model."""
    nodes = [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("NoSuchOp", ["r"], ["y"], name="odd")]
    graph = helper.make_graph(nodes, "g", [vi("x", T.FLOAT, [3])], [vi("y", T.FLOAT, [3])])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    with pytest.raises(ImportFailure, match=r"node 'odd' \(NoSuchOp\): op 'NoSuchOp' is not defined at opset 12"):
        import_model(m)


def test_the_newest_opset_of_the_installed_onnx_is_read():
    newest = onnx.defs.onnx_opset_version()
    nodes = [helper.make_node("Cast", ["x"], ["c"], to=T.DOUBLE), helper.make_node("Relu", ["c"], ["y"])]
    m = model(nodes, [vi("x", T.FLOAT, [3])], [vi("y", T.DOUBLE, [3])], opset=newest)
    expect_same(m, {"x": np.array([-1.5, 0.0, 2.5], dtype=np.float32)})


def test_what_an_op_gained_after_opset_23_is_refused_at_its_node():
    """Opset 28's SpaceToDepth has `mode`: set to CRD, it is refused, located at the node; at
    its default (DCR) the node imports."""
    x, y = vi("x", T.FLOAT, [1, 4, 2, 2]), vi("y", T.FLOAT, [1, 16, 1, 1])
    crd = helper.make_node("SpaceToDepth", ["x"], ["y"], name="s2d", blocksize=2, mode="CRD")
    refused = r"node 's2d' \(SpaceToDepth\): attribute 'mode' \(new in opset 28"
    with pytest.raises(ImportFailure, match=refused):
        import_model(model([crd], [x], [y], opset=28))
    dcr = helper.make_node("SpaceToDepth", ["x"], ["y"], blocksize=2, mode="DCR")
    expect_same(model([dcr], [x], [y], opset=28), {"x": RNG.standard_normal((1, 4, 2, 2)).astype(np.float32)})


def test_attention_gains_of_opsets_24_and_25_and_its_scores_output_match_the_reference():
    """Opset 25's sliding window, opset 24's `nonpad_kv_seqlen`, the `qk_matmul_output` output
    and a value head width other than the query's go step by step (the reference's order)."""
    q, v = vi("q", T.FLOAT, [2, 2, 4, 8]), vi("v", T.FLOAT, [2, 2, 4, 6])
    outs = [vi("y", T.FLOAT, [2, 2, 4, 6]), vi("qk", T.FLOAT, [2, 2, 4, 4])]
    window = helper.make_node("Attention", ["q", "q", "v", "", "", "", "n"], ["y", "", "", "qk"], name="attn",
                              left_window_size=1, is_causal=1, qk_matmul_output_mode=3)  # fmt: skip
    m = model([window], [q, v, vi("n", T.INT64, [2])], outs, opset=25)
    feeds = {"q": RNG.standard_normal((2, 2, 4, 8)).astype(np.float32),
             "v": RNG.standard_normal((2, 2, 4, 6)).astype(np.float32), "n": np.array([4, 3], np.int64)}  # fmt: skip
    expect_same(m, feeds)


# The tool ----------------------------------------------------------------------------


def test_the_console_script_is_declared():
    import tomllib
    from pathlib import Path

    pyproject = Path(__file__).resolve().parents[2] / "pyproject.toml"
    scripts = tomllib.loads(pyproject.read_text())["project"]["scripts"]
    assert scripts["rlx-import-onnx"] == "rlx_xdsl.tools.import_onnx:main"
    assert scripts["rlx-import-torch"] == "rlx_xdsl.tools.import_torch:main"


def tool(*args: str) -> subprocess.CompletedProcess:
    """The tool in its own process: exit status and stderr exactly as a user sees them."""
    command = [sys.executable, "-m", "rlx_xdsl.tools.import_onnx", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120)


def test_tool_writes_the_module(mlp, tmp_path):
    source, out = tmp_path / "mlp.onnx", tmp_path / "mlp.mlir"
    onnx.save(mlp, source)
    assert import_onnx.main([str(source), "-o", str(out)]) == 0
    assert 'mir.matmul %x, %w1 : (tensor<?x6xf32>, tensor<6x10xf32>) -> tensor<?x10xf32> loc("fc1")' in out.read_text()
    module = parse_module(out.read_text())
    assert find_function(module, "main").sym_name.data == "main"


def test_tool_reports_a_corrupt_file_in_one_line(tmp_path):
    source, out = tmp_path / "bad.onnx", tmp_path / "out.mlir"
    source.write_bytes(b"\x08\x07garbage\xff\xff\xff")
    done = tool(str(source), "-o", str(out))
    assert done.returncode == 1
    assert done.stderr.startswith(f"{source}: error: not a valid ONNX model")
    assert "Traceback" not in done.stderr and len(done.stderr.splitlines()) == 1
    assert not out.exists()


def test_tool_leaves_the_output_untouched_on_an_unsupported_op(tmp_path, capsys):
    source, out = tmp_path / "decoder.onnx", tmp_path / "out.mlir"
    onnx.save(_decoder_model(), source)
    out.write_text("previous\n")
    assert import_onnx.main([str(source), "-o", str(out)]) == 1
    assert capsys.readouterr().err == f"{source}: error: node 'the_decoder' (ImageDecoder): unsupported ONNX op 'ImageDecoder'\n"
    assert out.read_text() == "previous\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["decoder.onnx", "out.mlir"]  # no temporary left


def test_softplus_and_elu_keep_their_digits_near_zero():
    """Softplus(-20) is log1p(exp(-20)) = 2.06e-9 (log(1 + exp(-20)) rounds to 0 in f32);
    Elu at -1e-8 is alpha * expm1(-1e-8), not alpha * (exp(x) - 1) = 0. The oracle is
    numpy's float64 log1p/expm1 (the ONNX reference evaluator computes the naive forms)."""
    nodes = [helper.make_node("Softplus", ["x"], ["sp"]), helper.make_node("Elu", ["x"], ["elu"], alpha=0.5)]
    m = model(nodes, [vi("x", T.FLOAT, [6])], [vi("sp", T.FLOAT, [6]), vi("elu", T.FLOAT, [6])])
    x = np.array([-20.0, -90.0, -1e-8, -3e-6, 40.0, 0.5], np.float32)
    softplus, elu = run(m, {"x": x})
    wide = x.astype(np.float64)
    np.testing.assert_allclose(softplus, np.maximum(wide, 0) + np.log1p(np.exp(-np.abs(wide))), rtol=2e-6, atol=0)
    np.testing.assert_allclose(elu, np.where(wide > 0, wide, 0.5 * np.expm1(wide)), rtol=2e-6, atol=0)


def test_erf_matches_the_reference():
    x = np.array([0.0, -0.3, 0.8, -2.0, 4.5, np.inf, -np.inf], np.float32)
    m = model([helper.make_node("Erf", ["x"], ["y"])], [vi("x", T.FLOAT, [7])], [vi("y", T.FLOAT, [7])])
    expect_same(m, {"x": x}, atol=0)
    assert "mir.erf" in {op.name for op in import_model(m).walk()}


def test_mod_fmod_keeps_the_exact_remainder():
    """1 fmod 0.1 is 0.099999994 (C's fmod, exact); `1 - 0.1 * trunc(1 / 0.1)` in f32 is 0."""
    a = np.array([1.0, -1.0, 7.5, -7.5, 5.0, -4.0], np.float32)
    b = np.array([0.1, 0.1, -2.0, 2.0, 0.7, 2.0], np.float32)
    m = model(
        [helper.make_node("Mod", ["a", "b"], ["y"], fmod=1)],
        [vi("a", T.FLOAT, [6]), vi("b", T.FLOAT, [6])],
        [vi("y", T.FLOAT, [6])],
    )
    got = run(m, {"a": a, "b": b})[0]
    np.testing.assert_array_equal(got, np.fmod(a, b))
    np.testing.assert_array_equal(np.signbit(got), np.signbit(np.fmod(a, b)))


@pytest.mark.parametrize("largest", [1, 0])
@pytest.mark.parametrize("elem, dtype", [(T.FLOAT, np.float32), (T.INT32, np.int32)])
def test_topk_largest_and_smallest_match_the_reference(largest, elem, dtype):
    """Ties lower index first; the smallest of integers too (a sort, not a negation)."""
    x = np.array([[3, 1, 4, 1, 5, -(2**31) if dtype is np.int32 else -9], [2, 7, 1, 8, 2, 8]], dtype)
    m = model(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1, largest=largest)],
        [vi("x", elem, [2, 6])],
        [vi("v", elem, [2, 3]), vi("i", T.INT64, [2, 3])],
        inits=[numpy_helper.from_array(np.array([3], np.int64), "k")],
    )
    expect_same(m, {"x": x}, atol=0)


@pytest.mark.parametrize(
    "ceil_mode, dilations, pads", [(1, [1, 1], [0, 0, 0, 0]), (1, [2, 2], [1, 1, 1, 1]), (0, [2, 1], [0, 0, 0, 0])]
)
def test_max_pool_with_ceil_mode_and_dilations_matches_the_reference(ceil_mode, dilations, pads):
    """SqueezeNet's `MaxPool(kernel 3, stride 2, ceil_mode 1)`, and dilated windows."""
    x = RNG.standard_normal((1, 2, 7, 8)).astype(np.float32)
    node = helper.make_node(
        "MaxPool", ["x"], ["y"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=ceil_mode, dilations=dilations, pads=pads
    )
    import torch

    pool = torch.nn.MaxPool2d(3, 2, pads[0], dilation=dilations, ceil_mode=bool(ceil_mode))
    expected = pool(torch.from_numpy(x)).numpy()
    m = model([node], [vi("x", T.FLOAT, [1, 2, 7, 8])], [vi("y", T.FLOAT, list(expected.shape))])
    np.testing.assert_array_equal(run(m, {"x": x})[0], expected)
    expect_same(m, {"x": x}, atol=0)
