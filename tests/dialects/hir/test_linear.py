"""HIR projection blocks against formulas written here (numpy), plus types, traits and errors."""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.hir.linear import (
    LinearFusedOp,
    LinearOp,
    SharedLinearPairOp,
    SwigluOp,
)
from rlx_xdsl.dialects.mir.attrs import Activation
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(8)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-linear.mlir"
D = DYNAMIC

_erf = np.vectorize(math.erf)

ACTIVATIONS = {
    None: lambda v: v,
    "relu": lambda v: np.maximum(v, 0.0),
    "silu": lambda v: v / (1.0 + np.exp(-v)),
    "gelu": lambda v: 0.5 * v * (1.0 + _erf(v / math.sqrt(2.0))),
    "tanh": np.tanh,
    "sigmoid": lambda v: 1.0 / (1.0 + np.exp(-v)),
    "neg": lambda v: -v,
}


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def reference_linear(x, w, b=None, act=None):
    y = x.astype(np.float64) @ w.astype(np.float64)
    if b is not None:
        y = y + b
    return ACTIVATIONS[act](y)


@pytest.mark.parametrize("act", list(ACTIVATIONS))
@pytest.mark.parametrize("bias_shape", [None, (6,), (1, 6), ()])
def test_linear_matches_formula(act, bias_shape):
    x, w = rand(2, 3, 5), rand(5, 6)
    b = None if bias_shape is None else rand(*bias_shape)
    out = run_block("linear", [x, w, b], activation=act)
    np.testing.assert_allclose(out, reference_linear(x, w, b, act), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("act", [None, "gelu_approx", "abs"])
def test_linear_fused_matches_formula(act):
    x, w, b = rand(4, 5), rand(5, 3), rand(3)
    expected = reference_linear(x, w, b)
    if act == "gelu_approx":
        expected = 0.5 * expected * (1 + np.tanh(math.sqrt(2 / math.pi) * (expected + 0.044715 * expected**3)))
    elif act == "abs":
        expected = np.abs(expected)
    np.testing.assert_allclose(run_block("linear_fused", [x, w, b], activation=act), expected, rtol=1e-5, atol=1e-5)


def test_linear_keeps_bf16():
    x, w, b = (rand(*s, dtype=ml_dtypes.bfloat16) for s in ((2, 4), (4, 3), (3,)))
    out = run_block("linear", [x, w, b], activation="silu")
    assert out.dtype == ml_dtypes.bfloat16
    expected = reference_linear(x.astype(np.float32), w.astype(np.float32), b.astype(np.float32), "silu")
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=3e-2, atol=3e-2)


def test_shared_linear_pair_is_two_projections_of_one_input():
    x, w1, w2 = rand(3, 4), rand(4, 2), rand(4, 5)
    first, second = run_block("shared_linear_pair", [x, w1, w2])
    np.testing.assert_allclose(first, x.astype(np.float64) @ w1, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(second, x.astype(np.float64) @ w2, rtol=1e-5, atol=1e-5)


def reference_swiglu(x, up, gate, down):
    x, up, gate, down = (a.astype(np.float64) for a in (x, up, gate, down))
    g = x @ gate
    return (g / (1 + np.exp(-g)) * (x @ up)) @ down


def test_swiglu_matches_formula():
    x, up, gate, down = rand(2, 3, 8), rand(8, 6), rand(8, 6), rand(6, 4)
    out = run_block("swiglu", [x, up, gate, down])
    np.testing.assert_allclose(out, reference_swiglu(x, up, gate, down), rtol=1e-5, atol=1e-5)


def test_swiglu_gate_and_up_are_not_interchangeable():
    """silu is applied to x @ gate_w only: swapping the weights changes the result."""
    x, up, gate, down = rand(2, 8), rand(8, 6), rand(8, 6), rand(6, 4)
    assert not np.allclose(run_block("swiglu", [x, up, gate, down]), run_block("swiglu", [x, gate, up, down]))


# Types, traits, labels --------------------------------------------------------------


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "expected"),
    [([D, 8], [8, 4], [D, 4]), ([2, D, 8], [D, 4], [2, D, 4]), ([2, 3, 8], [8, D], [2, 3, D])],
)
def test_linear_infers_dynamic_shapes(x_shape, w_shape, expected):
    b = GraphBuilder()
    out = b.hir.linear(b.input("x", x_shape), b.param("w", w_shape))
    assert out.type == TensorType(f32, expected)


def test_swiglu_infers_its_output_width_from_down_w():
    b = GraphBuilder()
    x = b.input("x", [D, 8])
    out = b.hir.swiglu(x, b.param("u", [8, 6]), b.param("g", [8, 6]), b.param("d", [6, 3]))
    assert out.type == TensorType(f32, [D, 3])


@pytest.mark.parametrize("op", [LinearOp, LinearFusedOp, SharedLinearPairOp, SwigluOp])
def test_projection_blocks_are_pure_compute(op):
    assert precision_class(op) is Precision.COMPUTE


def test_labels_default_to_rlx_names_and_follow_rlx_label():
    b = GraphBuilder()
    x, w = b.input("x", [2, 4]), b.param("w", [4, 4])
    default = b.hir.linear(x, w).owner
    named = b.hir.linear(x, w, label="layers.0.q").owner
    pair = b.hir.shared_linear_pair(x, w, w)[0].owner
    swiglu = b.hir.swiglu(x, w, w, w).owner
    assert [o.block_label() for o in (default, named, pair, swiglu)] == [
        "linear", "layers.0.q", "shared_linear_pair", "swiglu_ffn",
    ]  # fmt: skip


def test_builder_rejects_a_contraction_mismatch():
    b = GraphBuilder()
    with pytest.raises(VerifyException, match="'hir.linear' w has 3 rows but x has 4 features"):
        b.hir.linear(b.input("x", [2, 4]), b.param("w", [3, 4]))


def test_every_activation_is_accepted():
    b = GraphBuilder()
    x, w = b.input("x", [2, 4]), b.param("w", [4, 4])
    for kind in Activation:
        assert b.hir.linear(x, w, activation=kind).owner.kind is kind


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
