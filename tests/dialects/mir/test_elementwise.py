"""Elementwise MIR ops against independent oracles (closed formulas and ONNX)."""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import f16
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.attrs import CastConfigAttr
from rlx_xdsl.dialects.mir.elementwise import CastOp
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-elementwise.mlir"

RNG = np.random.default_rng(7)
X = RNG.standard_normal((3, 4)).astype(np.float32)
POS = (np.abs(X) + 0.1).astype(np.float32)

ONNX_UNARY = ["relu", "sigmoid", "tanh", "exp", "log", "sqrt", "neg", "abs", "sin", "cos", "tan", "atan", "gelu", "erf"]
"""Unary ops whose ONNX operator is the capitalised op name."""
POSITIVE_DOMAIN = {"log", "sqrt"}


@pytest.mark.parametrize("op", sorted(ONNX_UNARY))
def test_unary_matches_onnx(op):
    x = POS if op in POSITIVE_DOMAIN else X
    np.testing.assert_allclose(run_op(op, [x]), onnx_run(op.capitalize(), [x]), rtol=1e-5, atol=1e-6)


def test_gelu_approx_matches_onnx_tanh_gelu():
    expected = onnx_run("Gelu", [X], approximate="tanh")
    np.testing.assert_allclose(run_op("gelu_approx", [X]), expected, rtol=1e-5, atol=1e-6)


FORMULAS = {
    "silu": lambda x: x / (1 + np.exp(-x)),
    "rsqrt": lambda x: x ** -0.5,
    "gelu": lambda x: np.array([v * 0.5 * (1 + math.erf(v / math.sqrt(2))) for v in x.flat]).reshape(x.shape),
}


@pytest.mark.parametrize("op", sorted(FORMULAS))
def test_unary_matches_formula(op):
    np.testing.assert_allclose(run_op(op, [POS]), FORMULAS[op](POS.astype(np.float64)), rtol=1e-5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=str)
def test_erf_edge_values_match_torch(dtype):
    """Odd, saturating to +-1, -0.0 kept, NaN kept; torch's float64 erf is the oracle."""
    import torch

    x = np.array([0.0, -0.0, 1e-20, -0.3, 0.5, 1.7, -3.0, 6.0, -30.0, np.inf, -np.inf, np.nan], dtype)
    got = run_op("erf", [x])
    expected = torch.erf(torch.from_numpy(x.astype(np.float64))).numpy().astype(dtype)
    assert got.dtype == x.dtype
    np.testing.assert_allclose(got, expected, rtol={np.float64: 1e-15}.get(dtype, 1e-6), atol=0)
    assert np.signbit(got[1]) and not np.signbit(got[0])


TINY = np.array([1e-8, -1e-8, 3e-6, -3e-6, 1e-30, 0.5, -0.5, 20.0, -20.0, -0.99], np.float32)
PRECISE = {"log1p": math.log1p, "expm1": math.expm1}
"""Python's `math.log1p`/`math.expm1` (C's, in float64): the independent oracle."""


@pytest.mark.parametrize("op", sorted(PRECISE))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, ml_dtypes.bfloat16], ids=str)
def test_log1p_and_expm1_keep_every_digit_near_zero(op, dtype):
    """At x = 1e-8 `log(1 + x)` and `exp(x) - 1` are 0 in f32; log1p and expm1 are x."""
    x = TINY[TINY > -1] if op == "log1p" else TINY  # log1p's domain (its edges: the test below)
    x = x.astype(dtype)
    expected = np.array([PRECISE[op](float(v)) for v in x.astype(np.float64)]).astype(dtype)
    got = run_op(op, [x])
    assert got.dtype == x.dtype
    tolerance = {np.float32: 2e-7, np.float64: 1e-15}.get(dtype, 8e-3)
    np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64), rtol=tolerance, atol=0)


def test_log1p_and_expm1_edge_values():
    """log1p: -inf at -1, NaN below -1, -0.0 kept; expm1: inf on overflow, -1 at -inf (C's)."""
    x = np.array([-1.0, -2.0, -np.inf, -0.0, np.inf, 100.0, np.nan], np.float32)
    with np.errstate(all="ignore"):
        log1p, expm1 = run_op("log1p", [x]), run_op("expm1", [x])
    np.testing.assert_allclose(log1p, [-np.inf, np.nan, np.nan, -0.0, np.inf, math.log1p(100.0), np.nan], rtol=1e-7)
    assert np.signbit(log1p[3])
    np.testing.assert_allclose(expm1, [math.expm1(-1.0), math.expm1(-2.0), -1.0, -0.0, np.inf, np.inf, np.nan], rtol=1e-7)
    assert np.signbit(expm1[3])


def test_round_halves_away_from_zero():
    x = np.array([-2.5, -1.5, -0.4, 0.5, 1.5, 2.49], np.float32)
    np.testing.assert_array_equal(run_op("round", [x]), [-3, -2, -0, 1, 2, 2])


@pytest.mark.parametrize(
    ("op", "onnx_op"),
    [("add", "Add"), ("sub", "Sub"), ("mul", "Mul"), ("div", "Div"), ("max", "Max"), ("min", "Min"), ("pow", "Pow")],
)
def test_binary_broadcast_matches_onnx(op, onnx_op):
    a = POS
    b = (RNG.random((4,)) + 0.5).astype(np.float32)
    np.testing.assert_allclose(run_op(op, [a, b]), onnx_run(onnx_op, [a, b]), rtol=1e-5)


@pytest.mark.parametrize(
    ("pred", "onnx_op", "negate"),
    [("eq", "Equal", False), ("ne", "Equal", True), ("lt", "Less", False), ("le", "LessOrEqual", False),
     ("gt", "Greater", False), ("ge", "GreaterOrEqual", False)],
)
def test_compare_matches_onnx(pred, onnx_op, negate):
    a = np.array([[1, 2, 3], [3, 2, 1]], np.float32)
    b = np.array([2, 2, 2], np.float32)
    expected = onnx_run(onnx_op, [a, b])
    out = run_op("compare", [a, b], predicate=pred)
    assert out.dtype == np.bool_
    np.testing.assert_array_equal(out, ~expected if negate else expected)


def test_where_matches_onnx():
    cond = np.array([[True, False, True]])
    a = X[:, :3]
    b = np.float32([9, 8, 7])
    np.testing.assert_array_equal(run_op("where", [cond, a, b]), onnx_run("Where", [cond, a, b]))


def test_mixed_dtypes_promote():
    a = np.array([1.5, 2.5], np.float32)
    i = np.array([3, 4], np.int32)
    out = run_op("add", [a, i])
    assert out.dtype == np.float64
    np.testing.assert_array_equal(out, [4.5, 6.5])


def test_integer_division_truncates_like_rust():
    a = np.array([7, -7], np.int32)
    b = np.array([2, 2], np.int32)
    np.testing.assert_array_equal(run_op("div", [a, b]), [3, -3])


def test_bf16_computes_in_bf16():
    x = np.array([1.0, 1.0 / 3.0], ml_dtypes.bfloat16)
    out = run_op("mul", [x, x])
    assert out.dtype == ml_dtypes.bfloat16
    assert out[1] == (x[1] * x[1]).astype(ml_dtypes.bfloat16)


def test_cast_truncates_float_to_int():
    b = GraphBuilder("f")
    x = b.input("x", [3])
    b.output(b.cast(x, "i32"))
    (out,) = run_function(b.module(), "f", [np.float32([1.7, -1.7, 2.0])])
    np.testing.assert_array_equal(out, [1, -1, 2])
    assert out.dtype == np.int32


def test_a_blocked_cast_is_reported_not_guessed_by_the_interpreter():
    """CastConfig's scaling fields have no semantics in RLX; running one is a clear error."""
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    blocked = b.emit(CastOp(x, f16, CastConfigAttr([1, 2], round_sf=True)))
    b.output(blocked)
    module = b.module()
    module.verify()
    assert "config <sf_block = [1, 2], round_sf>" in str(module)
    with pytest.raises(KernelError, match="'mir.cast' with sf_block has no reference kernel"):
        run_function(module, "f", [np.ones((2, 4), np.float32)])


def test_cast_config_round_trips_its_python_values():
    config = CastConfigAttr([8, 128])
    assert config.block == (8, 128) and not config.rounds_to_power_of_two
    assert CastConfigAttr([1, 32], round_sf=True).rounds_to_power_of_two


def test_broadcast_mismatch_is_rejected():
    b = GraphBuilder("f")
    x = b.input("x", [2, 3])
    y = b.input("y", [4])
    with pytest.raises(VerifyException, match=r"'mir.add' shapes \[2, 3\], \[4\] do not broadcast"):
        b.add(x, y)


def test_activation_rejects_integers():
    b = GraphBuilder("f")
    x = b.input("x", [2], "i32")
    with pytest.raises(VerifyException, match="'mir.exp' operand must have a floating-point element type"):
        b.exp(x)


@pytest.mark.parametrize(
    ("shape", "dimension", "dtype"),
    [((5,), 0, np.int64), ((2, 3, 4), 1, np.float32), ((2, 3, 4), -1, np.int32), ((3, 2), 0, np.float64)],
)
def test_iota_holds_the_index_along_its_dimension(shape, dimension, dtype):
    b = GraphBuilder("f")
    b.output(b.mir.iota(shape, dtypes.dtype_of_numpy(np.dtype(dtype)).element_type, dimension=dimension))
    from rlx_xdsl.run import run_function

    (out,) = run_function(b.module(), "f", [])
    assert out.shape == shape and out.dtype == dtype
    axis = dimension % len(shape)
    for index in np.ndindex(*shape):  # the definition, element by element
        assert out[index] == index[axis]


def test_iota_ramp_stays_exact_in_i64_for_a_large_vocabulary():
    b = GraphBuilder("f")
    b.output(b.mir.iota([1, 50_000], "i64", dimension=1))
    from rlx_xdsl.run import run_function

    module = b.module()
    (out,) = run_function(module, "f", [])
    assert out[0, 0] == 0 and out[0, -1] == 49_999 and np.all(np.diff(out[0]) == 1)
    assert len(str(module)) < 200  # the ramp is one op, not 50k constants


@pytest.mark.parametrize("backend", ["interpreter", "iree", "xla"])
def test_iota_like_takes_its_dynamic_dims_from_like_at_run_time(backend):
    """`arange(x.shape[0])` and a [?, 8] ramp along dim 1, against numpy, at two sizes."""
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 8], "i64")
    b.output(
        b.mir.iota([DYNAMIC], "i64", dimension=0, like=x, like_dims=[0]),
        b.mir.iota([DYNAMIC, 8], "f32", dimension=1, like=x, like_dims=[0, -1]),
    )
    module = b.module()
    for batch in (1, 5):
        ramp, rows = run_function(module, "f", [np.zeros((batch, 8), np.int64)], backend=backend)
        np.testing.assert_array_equal(ramp, np.arange(batch))
        np.testing.assert_array_equal(rows, np.broadcast_to(np.arange(8, dtype=np.float32), (batch, 8)))


def test_iota_is_a_boundary_op_whose_only_operand_is_read_for_its_shape():
    from rlx_xdsl.dialects.mir.elementwise import IotaOp
    from rlx_xdsl.dialects.traits import OperandRoles, Precision, Role, precision_class

    assert precision_class(IotaOp) is Precision.BOUNDARY
    assert [name for name, _ in IotaOp.get_irdl_definition().operands] == ["like"]
    assert dict(IotaOp.get_trait(OperandRoles).roles) == {"like": Role.SHAPE}


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
