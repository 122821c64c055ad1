"""Shape MIR ops against independent oracles (ONNX Reshape/Transpose/Slice/Concat/Expand and formulas)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32, i1
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.shape import OPS
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(5)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-shape.mlir"
D = DYNAMIC
X = RNG.standard_normal((2, 3, 4)).astype(np.float32)


def i64s(*values):
    return np.array(values, np.int64)


def run_graph(shape, dtype, op, x, **attributes):
    """Run `op` on an input declared with `shape` (which may hold `?`) and return the output."""
    b = GraphBuilder("f")
    b.output(getattr(b, op)(b.input("x", shape, dtype), **attributes))
    module = b.module()
    module.verify()
    (out,) = run_function(module, "f", [x])
    return out


def infer(op, shapes, dtype="f32", **attributes):
    """The result type the builder infers for `op` on inputs of `shapes`."""
    return build_op(op, shapes, dtype, **attributes).type


# reshape ------------------------------------------------------------------------


@pytest.mark.parametrize("new_shape", [[6, 4], [4, -1], [-1], [2, 2, 2, 3], [1, 24, 1]])
def test_reshape_matches_onnx(new_shape):
    expected = onnx_run("Reshape", [X, i64s(*new_shape)])
    out = run_op("reshape", [X], new_shape=new_shape)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_reshape_keeps_row_major_order():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    np.testing.assert_array_equal(run_op("reshape", [x], new_shape=[3, 2]), [[0, 1], [2, 3], [4, 5]])


def test_reshape_dynamic_wildcard_is_resolved_at_run_time():
    assert infer("reshape", [[D, 4]], new_shape=[-1, 2]) == TensorType(f32, [D, 2])
    out = run_graph([D, 4], "f32", "reshape", X.reshape(6, 4), new_shape=[-1, 2])
    np.testing.assert_array_equal(out, X.reshape(12, 2))


def test_reshape_to_zero_sized_shape():
    x = np.zeros((0, 3), np.float32)
    assert run_op("reshape", [x], new_shape=[3, 0]).shape == (3, 0)


# transpose ----------------------------------------------------------------------


@pytest.mark.parametrize("perm", [[0, 1, 2], [2, 0, 1], [1, 0, 2], [2, 1, 0]])
def test_transpose_matches_onnx(perm):
    np.testing.assert_array_equal(run_op("transpose", [X], perm=perm), onnx_run("Transpose", [X], perm=perm))


def test_transpose_formula():
    out = run_op("transpose", [X], perm=[2, 0, 1])
    for i, j, k in np.ndindex(*X.shape):
        assert out[k, i, j] == X[i, j, k]


def test_transpose_infers_dynamic_dims():
    assert infer("transpose", [[D, 3, 5]], perm=[2, 0, 1]) == TensorType(f32, [5, D, 3])


# narrow -------------------------------------------------------------------------


@pytest.mark.parametrize(("axis", "start", "length"), [(0, 1, 1), (1, 0, 3), (2, 1, 2), (-1, 3, 1), (-3, 0, 2)])
def test_narrow_matches_onnx_slice(axis, start, length):
    expected = onnx_run("Slice", [X, i64s(start), i64s(start + length), i64s(axis)])
    np.testing.assert_array_equal(run_op("narrow", [X], axis=axis, start=start, len=length), expected)


def test_narrow_formula():
    np.testing.assert_array_equal(run_op("narrow", [X], axis=1, start=1, len=2), X[:, 1:3, :])


def test_narrow_of_dynamic_dim_is_static_and_checked_at_run_time():
    assert infer("narrow", [[D, 6]], axis=0, start=1, len=3) == TensorType(f32, [3, 6])
    x = RNG.standard_normal((5, 6)).astype(np.float32)
    np.testing.assert_array_equal(run_graph([D, 6], "f32", "narrow", x, axis=0, start=1, len=3), x[1:4])
    with pytest.raises(KernelError, match=r"'mir.narrow' start 1 \+ len 3 exceeds dim 2 of axis 0"):
        run_graph([D, 6], "f32", "narrow", x[:2], axis=0, start=1, len=3)


# concat -------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_concat_matches_onnx(axis):
    parts = []
    for size in (1, 3, 2):
        shape = list(X.shape)
        shape[axis] = size
        parts.append(RNG.standard_normal(shape).astype(np.float32))
    np.testing.assert_array_equal(run_op("concat", parts, axis=axis), onnx_run("Concat", parts, axis=axis))


def test_concat_formula_and_single_operand():
    a, b = np.float32([[1, 2]]), np.float32([[3, 4], [5, 6]])
    np.testing.assert_array_equal(run_op("concat", [a, b], axis=0), [[1, 2], [3, 4], [5, 6]])
    np.testing.assert_array_equal(run_op("concat", [a], axis=1), a)


def test_concat_keeps_dtype():
    a = np.array([1.5], ml_dtypes.bfloat16)
    out = run_op("concat", [a, a], axis=0)
    assert out.dtype == ml_dtypes.bfloat16


@pytest.mark.parametrize(
    ("shapes", "axis", "expected"),
    [
        ([[2, 3], [D, 3]], 0, [D, 3]),
        ([[D, 3], [2, 4]], 1, [2, 7]),
        ([[D, D], [2, 4]], 1, [2, D]),
    ],
)
def test_concat_infers_dynamic_dims(shapes, axis, expected):
    assert infer("concat", shapes, axis=axis) == TensorType(f32, expected)


# expand -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("shape", "target"), [((3, 1), (3, 4)), ((3, 1), (2, 3, 5)), ((1,), (2, 2)), ((2, 3), (2, 3)), ((), (2,))]
)
def test_expand_matches_onnx(shape, target):
    x = RNG.standard_normal(shape).astype(np.float32)
    np.testing.assert_array_equal(run_op("expand", [x], target_shape=target), onnx_run("Expand", [x, i64s(*target)]))


def test_expand_minus_one_keeps_input_dim():
    x = np.float32([[1], [2], [3]])
    out = run_op("expand", [x], target_shape=[2, -1, 2])
    assert out.shape == (2, 3, 2)
    for n, i, j in np.ndindex(*out.shape):
        assert out[n, i, j] == x[i, 0]


def test_expand_result_is_writable_copy():
    out = run_op("expand", [np.float32([1.0])], target_shape=[3])
    assert out.flags.writeable and out.strides == (4,)


def test_expand_dynamic_dims():
    assert infer("expand", [[D, 1]], dtype="i1", target_shape=[5, -1, 7]) == TensorType(i1, [5, D, 7])
    assert infer("expand", [[D]], target_shape=[4]) == TensorType(f32, [4])
    x = np.float32([[1], [2]])
    out = run_graph([D, 1], "f32", "expand", x, target_shape=[-1, 3])
    np.testing.assert_array_equal(out, [[1, 1, 1], [2, 2, 2]])


def _expand_like_module():
    """`b` [1, 3] and `c` [3] broadcast to the batch of `ids` [?, 2] (read at run time)."""
    g = GraphBuilder("f")
    b, c = g.input("b", [1, 3], "f32"), g.input("c", [3], "f32")
    ids = g.input("ids", [D, 2], "i64")
    g.output(
        g.mir.expand(b, target_shape=[-1, 3], like=ids, like_dims=[0, -1]),
        g.mir.expand(c, target_shape=[-1, 1, 3], like=ids, like_dims=[0, -1, -1]),
    )
    return g.module()


@pytest.mark.parametrize("backend", ["interpreter", "iree", "xla"])
def test_expand_like_takes_its_size_from_like_at_run_time(backend):
    """Against ONNX's Expand given the size as data, at two batch sizes."""
    module = _expand_like_module()
    b, c = np.float32([[1, 2, 3]]), np.float32([4, 5, 6])
    for batch in (1, 4):
        ids = np.zeros((batch, 2), np.int64)
        got_b, got_c = run_function(module, "f", [b, c, ids], backend=backend)
        np.testing.assert_array_equal(got_b, onnx_run("Expand", [b, i64s(batch, 3)]))
        np.testing.assert_array_equal(got_c, onnx_run("Expand", [c, i64s(batch, 1, 3)]))


def test_expand_like_gradient_sums_over_the_run_time_batch():
    """d sum(expand(b)) / db is the batch size, read from `like` at run time."""
    from rlx_xdsl.autodiff.grad import GradPass
    from rlx_xdsl.context import make_context

    g = GraphBuilder("f")
    b, ids = g.param("b", [1, 3], "f32"), g.input("ids", [D, 2], "i64")
    g.output(g.mir.expand(b, target_shape=[-1, 3], like=ids, like_dims=[0, -1]))
    module = g.module()
    GradPass(func="f", wrt=("b",)).apply(make_context(), module)
    module.verify()
    for batch in (1, 3):
        cotangent = np.ones((batch, 3), np.float32)
        _, grad = run_function(module, "f_grad", [np.float32([[1, 2, 3]]), np.zeros((batch, 2), np.int64), cotangent])
        np.testing.assert_array_equal(grad, np.full((1, 3), batch, np.float32))


def _like_module(build):
    """`build(g, x [?, 4], pos [1, 5], ids [?, ?])`'s one result: sizes from `ids` at run time."""
    g = GraphBuilder("f")
    x, pos = g.input("x", [D, 4], "f32"), g.input("pos", [1, 5], "i64")
    ids = g.input("ids", [D, D], "i64")
    g.output(build(g, x, pos, ids))
    return g.module()


LIKE_CASES = {  # a module, and its ONNX oracle at (batch, length)
    "reshape-two-sizes": (
        lambda g, x, pos, ids: g.mir.reshape(x, new_shape=[-1, -1, 4], like=ids, like_dims=[0, 1, -1]),
        lambda x, pos, b, n: onnx_run("Reshape", [x, i64s(b, n, 4)]),
    ),
    "reshape-one-inferred": (
        lambda g, x, pos, ids: g.mir.reshape(x, new_shape=[-1, 2, -1], like=ids, like_dims=[0, -1, -1]),
        lambda x, pos, b, n: onnx_run("Reshape", [x, i64s(b, 2, -1)]),
    ),
    "narrow": (
        lambda g, x, pos, ids: g.mir.narrow(pos, axis=1, start=1, len=-1, like=ids, like_dims=[-1, 1]),
        lambda x, pos, b, n: onnx_run("Slice", [pos, i64s(1), i64s(1 + n), i64s(1)]),
    ),
}


@pytest.mark.parametrize("backend", ["interpreter", "iree", "xla"])
@pytest.mark.parametrize("case", LIKE_CASES)
def test_reshape_and_narrow_like_take_their_sizes_from_like_at_run_time(case, backend):
    """Against ONNX's Reshape and Slice given the sizes as data, at two (batch, length)
    pairs: one module, several `?` dims."""
    build, oracle = LIKE_CASES[case]
    module = _like_module(build)
    pos = np.arange(10, 15, dtype=np.int64)[None]
    for batch, length in ((1, 3), (2, 4)):
        x = RNG.standard_normal((batch * length, 4)).astype(np.float32)
        (got,) = run_function(module, "f", [x, pos, np.zeros((batch, length), np.int64)], backend=backend)
        np.testing.assert_array_equal(got, oracle(x, pos, batch, length))


def _gradient_module(build, wrt: str):
    """`f(p [1, 6], x [?, ?, 4], ids [?, ?]) = build(g, p, x, ids)` with its `f_grad` over `wrt`."""
    from rlx_xdsl.autodiff.grad import GradPass
    from rlx_xdsl.context import make_context

    g = GraphBuilder("f")
    p, x = g.param("p", [1, 6], "f32"), g.param("x", [D, D, 4], "f32")
    g.output(build(g, p, x, g.input("ids", [D, D], "i64")))
    module = g.module()
    GradPass(func="f", wrt=(wrt,)).apply(make_context(), module)
    module.verify()
    return module


def test_narrow_like_and_two_dynamic_dims_reshape_gradients_at_two_sizes():
    """d sum(c * narrow(p, 1, len(ids))) / dp is c placed at [1, 1 + len) with zeros
    around; d sum(c * reshape(x, [-1, 4])) / dx is c reshaped to x's `?x?x4` (read from x)."""
    narrowed = _gradient_module(
        lambda g, p, x, ids: g.mir.narrow(p, axis=1, start=1, len=-1, like=ids, like_dims=[-1, 1]), "p"
    )
    flat = _gradient_module(lambda g, p, x, ids: g.mir.reshape(x, new_shape=[-1, 4]), "x")
    for batch, length in ((1, 2), (3, 4)):
        args = [np.zeros((1, 6), np.float32), np.zeros((batch, length, 4), np.float32), np.zeros((batch, length), np.int64)]
        c_p = RNG.standard_normal((1, length)).astype(np.float32)
        c_x = RNG.standard_normal((batch * length, 4)).astype(np.float32)
        _, dp = run_function(narrowed, "f_grad", [*args, c_p])
        want = np.zeros((1, 6), np.float32)
        want[:, 1 : 1 + length] = c_p
        np.testing.assert_array_equal(dp, want)
        _, dx = run_function(flat, "f_grad", [*args, c_x])
        np.testing.assert_array_equal(dx, c_x.reshape(batch, length, 4))


def test_narrow_like_past_the_end_is_a_run_time_error():
    module = _like_module(LIKE_CASES["narrow"][0])
    x, pos = np.zeros((5, 4), np.float32), np.zeros((1, 5), np.int64)
    with pytest.raises(KernelError, match="start 1 \\+ len 5 exceeds dim 5 of axis 1"):
        run_function(module, "f", [x, pos, np.zeros((1, 5), np.int64)])


# Structure and verifier --------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
def test_shape_ops_are_pure_data_movement(op):
    assert precision_class(op) is Precision.DATA_MOVEMENT
    assert op.has_trait(Pure)


@pytest.mark.parametrize(
    ("op", "shapes", "attributes", "message"),
    [
        ("reshape", [[2, 3]], {"new_shape": [5]}, r"cannot reshape \[2, 3\] \(6 elements\) to new_shape \[5\]"),
        ("transpose", [[2, 3]], {"perm": [0]}, r"perm \[0\] is not a permutation of the 2 axes"),
        ("narrow", [[4]], {"axis": 0, "start": 2, "len": 3}, "start 2 \\+ len 3 exceeds dim 4 of axis 0"),
        ("concat", [[2], [2, 2]], {"axis": 0}, "operand #1 has rank 2, expected 1"),
        ("expand", [[2]], {"target_shape": [3]}, r"cannot expand \[2\] to target_shape \[3\]: input dim 2 is"),
    ],
)
def test_builder_rejects_bad_shapes(op, shapes, attributes, message):
    with pytest.raises(VerifyException, match=f"'mir.{op}' {message}"):
        infer(op, shapes, **attributes)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
