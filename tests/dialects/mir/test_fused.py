"""Fused MIR ops against independent formulas and against the primitive chains they stand for.

Each op is checked twice: against a numpy formula written here (float64, with
a tolerance), and bit for bit against the unfused chain built by hand from
primitive ops, so fused and unfused graphs agree exactly. The unfuse rules
are checked to emit that same chain.
"""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType, bf16, f32, i32
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.dialects.mir.fused import FusedMatmulBiasActOp, FusedResidualRmsNormOp, FusedSwigluOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.interpreters import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.transforms.unfuse import UnfusePass

RNG = np.random.default_rng(23)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-fused.mlir"
D = DYNAMIC


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def run_graph(build, inputs):
    """Build `f(*inputs)` with `build(b, *args)` returning the outputs, run it."""
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape, _dtype(x)) for i, x in enumerate(inputs)]
    outs = build(b, *args)
    b.output(*(outs if isinstance(outs, tuple) else (outs,)))
    module = b.module()
    module.verify()
    return run_function(module, "f", inputs)


def _dtype(x):
    return {np.dtype(np.float32): "f32", np.dtype(ml_dtypes.bfloat16): "bf16", np.dtype(np.float16): "f16"}[x.dtype]


def unfused_outputs(build, inputs):
    """Run the graph, then `rlx-unfuse` it and run it again: (fused outputs, unfused outputs, module)."""
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape, _dtype(x)) for i, x in enumerate(inputs)]
    b.output(build(b, *args))
    module = b.module()
    fused = run_function(module, "f", inputs)
    UnfusePass().apply(Context(), module)
    module.verify()
    return fused, run_function(module, "f", inputs), module


def body_ops(module):
    return [op.name for op in module.ops.first.body.block.ops][:-1]


# Independent formulas (float64) -------------------------------------------------------


def gelu_ref(v):
    return v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


def silu_ref(v):
    return v / (1.0 + np.exp(-v))


ACTIVATION_REF = {None: lambda v: v, "gelu": gelu_ref, "silu": silu_ref, "relu": lambda v: np.maximum(v, 0.0)}


def rms_norm_ref(s, gamma, beta, axis, eps):
    axes = tuple(range(axis % s.ndim, s.ndim))
    return s / np.sqrt(np.mean(s * s, axis=axes, keepdims=True) + eps) * gamma + beta


# mir.fused_matmul_bias_act ---------------------------------------------------------------


@pytest.mark.parametrize("activation", [None, "gelu", "silu", "relu"])
@pytest.mark.parametrize(("x_shape", "bias_shape"), [((3, 4), (5,)), ((2, 3, 4), (1, 5)), ((2, 3, 4), ())])
def test_matmul_bias_act_matches_formula(activation, x_shape, bias_shape):
    x, w, bias = rand(*x_shape), rand(4, 5), rand(*bias_shape)
    out = run_op("fused_matmul_bias_act", [x, w, bias], activation=activation)
    expected = ACTIVATION_REF[activation](x.astype(np.float64) @ w + bias)
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("activation", [None, "gelu", "silu", "tanh", "abs"])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_matmul_bias_act_equals_the_chain_it_replaces(activation, dtype):
    x, w, bias = rand(2, 3, 4, dtype=dtype), rand(4, 6, dtype=dtype), rand(6, dtype=dtype)
    (fused,) = run_graph(lambda b, x, w, c: b.fused_matmul_bias_act(x, w, c, activation=activation), [x, w, bias])

    def chain(b, x, w, c):
        value = b.add(b.matmul(x, w), c)
        return getattr(b, activation)(value) if activation else value

    (unfused,) = run_graph(chain, [x, w, bias])
    assert fused.dtype == dtype
    np.testing.assert_array_equal(fused.astype(np.float32), unfused.astype(np.float32))


def test_matmul_bias_act_unfuses_to_matmul_add_activation():
    inputs = [rand(3, 4), rand(4, 2), rand(2)]
    fused, unfused, module = unfused_outputs(
        lambda b, x, w, c: b.fused_matmul_bias_act(x, w, c, activation="silu"), inputs
    )
    assert body_ops(module) == ["mir.matmul", "mir.add", "mir.silu"]
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_matmul_bias_act_infers_dynamic_and_integer_types():
    b = GraphBuilder()
    out = b.fused_matmul_bias_act(b.input("x", [D, 3, 4]), b.input("w", [4, D]), b.input("c", [D]))
    assert out.type == TensorType(f32, [D, 3, D])
    out = b.fused_matmul_bias_act(
        b.input("i", [2, 3], "i32"), b.input("wi", [3, 2], "i32"), b.input("ci", [], "i32"), activation="relu"
    )
    assert out.type == TensorType(i32, [2, 2])


def test_matmul_bias_act_traits():
    assert precision_class(FusedMatmulBiasActOp) is Precision.COMPUTE
    assert FusedMatmulBiasActOp.has_trait(Pure)


# mir.fused_swiglu -------------------------------------------------------------------------


@pytest.mark.parametrize("gate_first", [False, True])
def test_swiglu_matches_formula(gate_first):
    x = rand(2, 3, 8)
    low, high = x[..., :4].astype(np.float64), x[..., 4:].astype(np.float64)
    up, gate = (high, low) if gate_first else (low, high)
    out = run_op("fused_swiglu", [x], gate_first=gate_first)
    assert out.shape == (2, 3, 4)
    np.testing.assert_allclose(out, silu_ref(gate) * up, rtol=1e-5, atol=1e-6)


def test_swiglu_gate_first_swaps_the_halves():
    """Gate 0 makes silu 0 whatever up is: which half is the gate shows in the zeros."""
    x = np.array([[0.0, 0.0, 3.0, 5.0]], np.float32)  # low half is 0
    assert np.all(run_op("fused_swiglu", [x], gate_first=True) == 0.0)
    assert np.all(run_op("fused_swiglu", [x], gate_first=False) == 0.0)  # up = low half = 0
    x = np.array([[1.0, 2.0, 0.0, 0.0]], np.float32)  # high half is 0
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=True), [[0.0, 0.0]])
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=False), [[0.0, 0.0]])
    x = np.array([[1.0, 2.0, 3.0, 4.0]], np.float32)
    gate_high = silu_ref(np.array([3.0, 4.0])) * [1.0, 2.0]
    gate_low = silu_ref(np.array([1.0, 2.0])) * [3.0, 4.0]
    np.testing.assert_allclose(run_op("fused_swiglu", [x]), [gate_high], rtol=1e-6)
    np.testing.assert_allclose(run_op("fused_swiglu", [x], gate_first=True), [gate_low], rtol=1e-6)


@pytest.mark.parametrize("gate_first", [False, True])
@pytest.mark.parametrize(("dtype", "cast_to"), [(np.float32, None), (np.float32, "bf16"), (ml_dtypes.bfloat16, "f32")])
def test_swiglu_equals_the_chain_it_replaces(gate_first, dtype, cast_to):
    x = rand(3, 6, dtype=dtype)
    (fused,) = run_graph(lambda b, x: b.fused_swiglu(x, gate_first=gate_first, cast_to=cast_to), [x])

    def chain(b, x):
        low = b.narrow(x, axis=-1, start=0, len=3)
        high = b.narrow(x, axis=-1, start=3, len=3)
        up, gate = (high, low) if gate_first else (low, high)
        value = b.mul(b.silu(gate), up)
        return b.cast(value, cast_to) if cast_to else value

    (unfused,) = run_graph(chain, [x])
    assert fused.dtype == unfused.dtype
    np.testing.assert_array_equal(fused.astype(np.float32), unfused.astype(np.float32))


@pytest.mark.parametrize("gate_first", [False, True])
def test_swiglu_unfuse_honours_gate_first(gate_first):
    fused, unfused, module = unfused_outputs(lambda b, x: b.fused_swiglu(x, gate_first=gate_first), [rand(2, 8)])
    assert body_ops(module) == ["mir.narrow", "mir.narrow", "mir.silu", "mir.mul"]
    silu = next(op for op in module.walk() if op.name == "mir.silu")
    assert silu.operands[0].owner.start.value.data == (0 if gate_first else 4)
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_swiglu_infers_halves_and_cast():
    b = GraphBuilder()
    assert b.fused_swiglu(b.input("x", [2, 8])).type == TensorType(f32, [2, 4])
    assert b.fused_swiglu(b.input("y", [2, D]), cast_to="bf16").type == TensorType(bf16, [2, D])


def test_swiglu_unfuse_rejects_a_dynamic_width():
    b = GraphBuilder("f")
    b.output(b.fused_swiglu(b.input("x", [2, D])))
    module = b.module()
    with pytest.raises(Exception, match="'mir.fused_swiglu' cannot be unfused: the last dim is dynamic"):
        UnfusePass().apply(Context(), module)


def test_swiglu_precision_class_follows_rlx():
    assert precision_class(FusedSwigluOp) is Precision.ELEMENTWISE


# mir.fused_residual_rms_norm ----------------------------------------------------------------


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("axis", [-1, 1])
def test_residual_rms_norm_matches_formula(with_bias, axis):
    x, residual = rand(2, 3, 4), rand(2, 3, 4)
    norm_shape = (4,) if axis == -1 else (3, 4)
    gamma, beta, bias = rand(*norm_shape), rand(*norm_shape), rand(4)
    operands = [x, residual, gamma, beta] + ([bias] if with_bias else [])
    out = run_op("fused_residual_rms_norm", operands, axis=axis, eps=1e-6)
    total = x.astype(np.float64) + residual + (bias if with_bias else 0.0)
    np.testing.assert_allclose(out, rms_norm_ref(total, gamma, beta, axis, 1e-6), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("with_bias", [False, True])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_residual_rms_norm_equals_the_chain_it_replaces(with_bias, dtype):
    inputs = [rand(2, 5, dtype=dtype) for _ in range(2)] + [rand(5, dtype=dtype) for _ in range(3)]

    def fused(b, x, r, g, be, c):
        return b.fused_residual_rms_norm(x, r, g, be, c if with_bias else None, axis=-1, eps=1e-5)

    def chain(b, x, r, g, be, c):
        total = b.add(x, r)
        total = b.add(total, c) if with_bias else total
        return b.rms_norm(total, g, be, axis=-1, eps=1e-5)

    (a,) = run_graph(fused, inputs)
    (u,) = run_graph(chain, inputs)
    assert a.dtype == dtype
    np.testing.assert_array_equal(a.astype(np.float32), u.astype(np.float32))


def test_residual_rms_norm_unfuse_keeps_axis_and_eps():
    inputs = [rand(2, 3, 4), rand(2, 3, 4), rand(4), rand(3, 4), rand(3, 4)]
    fused, unfused, module = unfused_outputs(
        lambda b, x, r, c, g, be: b.fused_residual_rms_norm(x, r, g, be, c, axis=-2, eps=1e-3), inputs
    )
    assert body_ops(module) == ["mir.add", "mir.add", "mir.rms_norm"]
    norm = next(op for op in module.walk() if op.name == "mir.rms_norm")
    assert norm.axis.value.data == -2
    assert norm.eps.value.data == pytest.approx(1e-3)
    np.testing.assert_array_equal(fused[0], unfused[0])


def test_residual_rms_norm_operands_follow_rlx_order():
    b = GraphBuilder()
    x, r, c, g, be = (b.input(n, [4]) for n in "xrcgb")
    op = FusedResidualRmsNormOp(x, r, g, be, c)
    assert list(op.operands) == [x, r, c, g, be]
    assert list(FusedResidualRmsNormOp(x, r, g, be).operands) == [x, r, g, be]
    assert op.bias is c and op.gamma is g and op.beta is be


def test_residual_rms_norm_sum_broadcasts_and_keeps_dynamic_dims():
    b = GraphBuilder()
    out = b.fused_residual_rms_norm(b.input("x", [D, 4]), b.input("r", [3, 1]), b.input("g", [4]), b.input("be", [4]))
    assert out.type == TensorType(f32, [3, 4])


def test_residual_rms_norm_rejects_mixed_dtypes_from_the_builder():
    b = GraphBuilder()
    with pytest.raises(VerifyException, match="'mir.fused_residual_rms_norm' residual element type bf16 differs"):
        b.fused_residual_rms_norm(b.input("x", [4]), b.input("r", [4], "bf16"), b.input("g", [4]), b.input("be", [4]))


def test_residual_rms_norm_precision_class():
    assert precision_class(FusedResidualRmsNormOp) is Precision.REDUCTION


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
