"""Normalisation MIR ops against independent oracles (numpy formulas and ONNX)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import norm
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(5)
X = (RNG.standard_normal((2, 3, 4)) * 2 + 0.5).astype(np.float32)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-norm.mlir"
CLOSE = {"rtol": 1e-5, "atol": 1e-5}


def affine_params(shape):
    return (RNG.standard_normal(shape).astype(np.float32),
            RNG.standard_normal(shape).astype(np.float32))


# --- mir.layer_norm --------------------------------------------------------------


def layer_norm_formula(x, gamma, beta, axis, eps):
    """Row-wise mean and biased variance over the trailing dims, in float64."""
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    mu = x.mean(axis=axes, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=axes, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * gamma + beta


@pytest.mark.parametrize(("axis", "param_shape"), [(-1, (4,)), (1, (3, 4)), (1, (4,)), (-2, (1,))])
def test_layer_norm_matches_onnx_and_formula(axis, param_shape):
    gamma, beta = affine_params(param_shape)
    out = run_op("layer_norm", [X, gamma, beta], axis=axis, eps=1e-3)
    onnx = onnx_run("LayerNormalization", [X, gamma, beta], axis=axis, epsilon=1e-3)
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, onnx, **CLOSE)
    np.testing.assert_allclose(out, layer_norm_formula(X, gamma, beta, axis, 1e-3), **CLOSE)


def test_layer_norm_default_eps_is_1e_5():
    gamma, beta = affine_params((4,))
    x = X * np.float32(1e-3)  # small variance, so eps matters
    expected = layer_norm_formula(x, gamma, beta, -1, 1e-5)
    np.testing.assert_allclose(run_op("layer_norm", [x, gamma, beta]), expected, rtol=1e-4)


def test_layer_norm_f16_accumulates_in_f32():
    # Squares of ~300 exceed f16's range (65504): f16 statistics would overflow to inf.
    x = (X * 100 + 300).astype(np.float16)
    gamma, beta = np.ones(4, np.float16), np.zeros(4, np.float16)
    out = run_op("layer_norm", [x, gamma, beta])
    assert out.dtype == np.float16
    expected = layer_norm_formula(x, 1.0, 0.0, -1, 1e-5)
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=1e-2, atol=1e-2)


# --- mir.rms_norm ----------------------------------------------------------------


def rms_norm_formula(x, gamma, beta, axis, eps):
    x = x.astype(np.float64)
    axes = tuple(range(axis % x.ndim, x.ndim))
    return x / np.sqrt((x**2).mean(axis=axes, keepdims=True) + eps) * gamma + beta


@pytest.mark.parametrize(("axis", "param_shape"), [(-1, (4,)), (1, (3, 4))])
def test_rms_norm_matches_onnx_plus_beta_and_formula(axis, param_shape):
    gamma, beta = affine_params(param_shape)
    out = run_op("rms_norm", [X, gamma, beta], axis=axis)
    onnx = onnx_run("RMSNormalization", [X, gamma], axis=axis, epsilon=1e-6) + beta
    np.testing.assert_allclose(out, onnx, **CLOSE)
    np.testing.assert_allclose(out, rms_norm_formula(X, gamma, beta, axis, 1e-6), **CLOSE)


def test_rms_norm_eps_is_used():
    x = np.zeros((1, 4), np.float32) + np.float32(1e-2)
    gamma, beta = np.ones(4, np.float32), np.zeros(4, np.float32)
    out = run_op("rms_norm", [x, gamma, beta], eps=1e-4)
    np.testing.assert_allclose(out, 1e-2 / np.sqrt(1e-4 + 1e-4), rtol=1e-5)


def test_rms_norm_bf16_keeps_dtype():
    x = X.astype(ml_dtypes.bfloat16)
    gamma, beta = (p.astype(ml_dtypes.bfloat16) for p in affine_params((4,)))
    out = run_op("rms_norm", [x, gamma, beta])
    assert out.dtype == ml_dtypes.bfloat16
    expected = rms_norm_formula(x, gamma.astype(np.float64), beta.astype(np.float64), -1, 1e-6)
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=2e-2, atol=2e-2)


# --- mir.group_norm --------------------------------------------------------------


def group_norm_formula(x, gamma, beta, groups, eps):
    """Explicit loops over samples and groups; per-channel affine."""
    x = x.astype(np.float64)
    n, c = x.shape[:2]
    per_group = c // groups
    out = np.empty_like(x)
    for i in range(n):
        for g in range(groups):
            channels = slice(g * per_group, (g + 1) * per_group)
            block = x[i, channels]
            out[i, channels] = (block - block.mean()) / np.sqrt(block.var() + eps)
    channel = (c,) + (1,) * (x.ndim - 2)
    return out * gamma.reshape(channel) + beta.reshape(channel)


@pytest.mark.parametrize(
    ("shape", "groups"), [((2, 6, 5), 3), ((2, 6, 3, 3), 2), ((1, 4, 2, 2, 2), 4), ((2, 4, 3), 1)]
)
def test_group_norm_matches_formula(shape, groups):
    x = RNG.standard_normal(shape).astype(np.float32)
    gamma, beta = affine_params((shape[1],))
    out = run_op("group_norm", [x, gamma, beta], num_groups=groups, eps=1e-4)
    assert out.shape == shape and out.dtype == np.float32
    np.testing.assert_allclose(out, group_norm_formula(x, gamma, beta, groups, 1e-4), **CLOSE)


def test_group_norm_groups_are_separate():
    # Channel 0-1 (group 0) scaled by 1000 must not influence group 1's statistics.
    x = RNG.standard_normal((1, 4, 3)).astype(np.float32)
    x[:, :2] *= 1000
    ones, zeros = np.ones(4, np.float32), np.zeros(4, np.float32)
    out = run_op("group_norm", [x, ones, zeros], num_groups=2)
    for g in range(2):
        block = out[0, 2 * g:2 * g + 2]
        assert abs(block.mean()) < 1e-5
        assert abs(block.std() - 1) < 1e-3


# --- Verification ----------------------------------------------------------------


def test_traits():
    statistics = [op for op in norm.OPS if op is not norm.BatchNormInferenceOp]  # given statistics: compute
    assert all(precision_class(op) is Precision.REDUCTION for op in statistics)
    assert all(op.has_trait(Pure) for op in norm.OPS)


def test_builder_defaults():
    b = GraphBuilder("f")
    x, g = b.input("x", [2, 4]), b.param("g", [4])
    assert b.layer_norm(x, g, g).owner.eps.value.data == pytest.approx(1e-5)
    assert b.rms_norm(x, g, g).owner.eps.value.data == pytest.approx(1e-6)
    assert b.rms_norm(x, g, g).owner.axis.value.data == -1


@pytest.mark.parametrize(
    ("op", "shapes", "attributes", "message"),
    [
        ("layer_norm", [[2, 4], [4], [4]], {"eps": -1e-5}, "'mir.layer_norm' eps must be positive"),
        ("layer_norm", [[2, 4], [2], [4]], {}, r"gamma shape \[2\] does not broadcast"),
        ("rms_norm", [[2, 4], [4], [4]], {"axis": -3}, "'mir.rms_norm' axis -3 is out of range"),
        ("group_norm", [[2, 6, 5], [6], [6]], {"num_groups": 5}, "6 channels do not split into 5"),
        ("group_norm", [[2, 6, 5], [6], [2]], {"num_groups": 3}, r"beta must have shape \[C\] = \[6\]"),
        ("group_norm", [[2, 6, 5], [6], [6]], {"num_groups": -2}, "num_groups must be at least 1"),
    ],
)
def test_builder_rejects_bad_operands(op, shapes, attributes, message):
    with pytest.raises(VerifyException, match=message):
        build_op(op, shapes, **attributes)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


# --- mir.batch_norm_inference --------------------------------------------------------


def batch_norm_case(shape=(2, 3, 4)):
    c = shape[1]
    x = RNG.standard_normal(shape).astype(np.float32)
    gamma, beta, mean = (RNG.standard_normal(c).astype(np.float32) for _ in range(3))
    var = (RNG.random(c) + 0.5).astype(np.float32)
    return [x, gamma, beta, mean, var]


@pytest.mark.parametrize("shape", [(2, 3), (2, 3, 4), (1, 2, 3, 2)])
def test_batch_norm_inference_matches_torch_eval_mode(shape):
    import torch

    x, gamma, beta, mean, var = batch_norm_case(shape)
    out = run_op("batch_norm_inference", [x, gamma, beta, mean, var], eps=1e-3)
    t = torch.nn.functional.batch_norm(
        *map(torch.from_numpy, (x, mean, var, gamma, beta)), training=False, eps=1e-3
    )
    np.testing.assert_allclose(out, t.numpy(), **CLOSE)


def test_batch_norm_inference_gradients_match_torch_and_jax():
    """x, gamma, beta against torch's autograd (eval mode); all five against jax.vjp."""
    import torch

    from rlx_xdsl.autodiff.grad import build_gradient
    from rlx_xdsl.run import run_function
    from rlx_xdsl.testing.jax_oracle import jax_vjp

    inputs = batch_norm_case()
    g = RNG.standard_normal(inputs[0].shape).astype(np.float32)
    b = GraphBuilder("f")
    params = [b.param(n, a.shape) for n, a in zip(("x", "gamma", "beta", "mean", "var"), inputs)]
    b.output(b.batch_norm_inference(*params, eps=1e-3))
    module = b.module()
    _, expected = jax_vjp(module, "f", inputs, range(5), g)
    build_gradient(module, "f")
    _, *grads = run_function(module, "f_grad", [*inputs, g])
    for got, want in zip(grads, expected, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert np.abs(want).max() > 1e-3

    x, gamma, beta = (torch.tensor(a, requires_grad=True) for a in inputs[:3])
    mean, var = (torch.tensor(a) for a in inputs[3:])  # torch does not differentiate the statistics
    y = torch.nn.functional.batch_norm(x, mean, var, gamma, beta, training=False, eps=1e-3)
    y.backward(torch.from_numpy(g))
    for got, t in zip(grads[:3], (x, gamma, beta)):
        np.testing.assert_allclose(got, t.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_batch_norm_inference_is_a_compute_op():
    assert precision_class(norm.BatchNormInferenceOp) is Precision.COMPUTE
