"""HIR norms against a formula written here: `x / sqrt(mean(x^2) + eps) * gamma + beta`."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.hir.norm import ResidualRmsNormOp, RmsNormOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(9)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-norm.mlir"


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def reference_rms(x, gamma, beta, eps):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps) * gamma + beta


@pytest.mark.parametrize("affine_shape", [(8,), (1,)])
@pytest.mark.parametrize("eps", [1e-6, 1e-2])
def test_rms_norm_matches_formula(affine_shape, eps):
    x, g, b = rand(2, 3, 8), rand(*affine_shape), rand(*affine_shape)
    out = run_block("rms_norm", [x, g, b], eps=eps)
    np.testing.assert_allclose(out, reference_rms(x, g, b, eps), rtol=1e-5, atol=1e-5)


def test_residual_rms_norm_normalises_the_sum():
    x, r, g, b = rand(4, 8), rand(4, 8), rand(8), rand(8)
    out = run_block("residual_rms_norm", [x, r, g, b], eps=1e-5)
    np.testing.assert_allclose(out, reference_rms(x.astype(np.float64) + r, g, b, 1e-5), rtol=1e-5, atol=1e-5)


def test_residual_broadcasts_against_x():
    x, r, g, b = rand(2, 3, 8), rand(3, 8), rand(8), rand(8)
    out = run_block("residual_rms_norm", [x, r, g, b])
    np.testing.assert_allclose(out, reference_rms(x.astype(np.float64) + r, g, b, 1e-6), rtol=1e-5, atol=1e-5)


def test_half_precision_norm_stays_half():
    x, g, b = (rand(*s, dtype=ml_dtypes.bfloat16) for s in ((4, 16), (16,), (16,)))
    out = run_block("rms_norm", [x, g, b])
    assert out.dtype == ml_dtypes.bfloat16
    expected = reference_rms(x.astype(np.float32), g.astype(np.float32), b.astype(np.float32), 1e-6)
    np.testing.assert_allclose(out.astype(np.float32), expected, rtol=3e-2, atol=3e-2)


def test_residual_result_type_is_the_broadcast_sum():
    b = GraphBuilder()
    x, r = b.input("x", [DYNAMIC, 8]), b.input("r", [3, 8])
    g = b.param("g", [8])
    assert b.hir.residual_rms_norm(x, r, g, g).type == TensorType(f32, [3, 8])


@pytest.mark.parametrize("op", [RmsNormOp, ResidualRmsNormOp])
def test_norms_are_reductions(op):
    assert precision_class(op) is Precision.REDUCTION


def test_default_eps_is_llamas():
    b = GraphBuilder()
    x, g = b.input("x", [2, 4]), b.param("g", [4])
    assert b.hir.rms_norm(x, g, g).owner.eps.value.data == pytest.approx(1e-6)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
