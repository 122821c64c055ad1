"""Complex and signal MIR ops against independent oracles: numpy.fft, and jax.vjp for
their VJP rules (JAX's complex convention: the transpose, not the adjoint)."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.builder import GraphBuilder
from rlx_xdsl.graph import graph_args
from rlx_xdsl.dialects.mir import signal
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.interpreters import run_function
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.shapes import DYNAMIC

RNG = np.random.default_rng(24)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-signal.mlir"
CLOSE = {"rtol": 1e-5, "atol": 1e-5}


def crand(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def interleave(z):
    return np.stack([z.real, z.imag], axis=-1).reshape(*z.shape[:-1], 2 * z.shape[-1]).astype(np.float32)


Z = crand(3, 6)

test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


# --- forward semantics ----------------------------------------------------------------


def test_conjugate_and_norm_sq_match_numpy():
    np.testing.assert_array_equal(run_op("conjugate", [Z]), np.conj(Z))
    out = run_op("complex_norm_sq", [Z])
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, np.abs(Z) ** 2, **CLOSE)


def test_norm_sq_backward_is_twice_g_times_conj_z():
    g = RNG.standard_normal(Z.shape).astype(np.float32)
    np.testing.assert_allclose(run_op("complex_norm_sq_backward", [Z, g]), 2 * g * np.conj(Z), **CLOSE)


@pytest.mark.parametrize("norm", ["backward", "forward", "ortho"])
@pytest.mark.parametrize("inverse", [False, True])
def test_fft_matches_numpy_on_both_layouts(inverse, norm):
    expected = (np.fft.ifft if inverse else np.fft.fft)(Z.astype(np.complex128), norm=norm)
    out = run_op("fft", [Z], inverse=inverse, norm=norm)
    assert out.dtype == np.complex64
    np.testing.assert_allclose(out, expected, **CLOSE)
    real = run_op("fft", [interleave(Z)], inverse=inverse, norm=norm)
    assert real.dtype == np.float32
    np.testing.assert_allclose(real, interleave(expected), **CLOSE)


def test_fft_default_norm_is_backward():
    b = GraphBuilder("f")
    assert b.fft(b.input("z", [4], "complex<f32>")).owner.norm_kind == signal.FftNorm.BACKWARD


def test_fft_real_layout_accepts_dynamic_last_dim():
    assert build_op("fft", [[2, DYNAMIC]]).type.get_shape() == (2, DYNAMIC)
    with pytest.raises(VerifyException, match="even last dim"):
        build_op("fft", [[2, 3]])


def test_precision_classes_follow_rlx():
    assert precision_class(signal.FftOp) is Precision.COMPUTE
    for op in (signal.ConjugateOp, signal.ComplexNormSqOp, signal.ComplexNormSqBackwardOp):
        assert precision_class(op) is Precision.ELEMENTWISE


# --- VJP rules against jax.vjp -----------------------------------------------------------
#
# rlx-grad needs a real loss: `sum(Re(op(z) * c))` seeds op's result with the cotangent c,
# so the gradient of z is what `jax.vjp(op, z)` returns for c.


def grad_vs_jax(build, inputs):
    """Build `@f` (params first), differentiate it with rlx-grad and with jax.vjp; compare."""
    from rlx_xdsl.testing.jax_oracle import jax_vjp

    b = GraphBuilder("f")
    build(b)
    module = b.module()
    wrt = [a.index for a in graph_args(module.body.block.first_op) if a.is_param]
    expected_loss, expected = jax_vjp(module, "f", inputs, wrt, np.float32(1))
    build_gradient(module, "f")
    module.verify()
    loss, *grads = run_function(module, "f_grad", [*inputs, np.float32(1)])
    np.testing.assert_allclose(loss, expected_loss, rtol=1e-4, atol=1e-4)
    for got, want in zip(grads[-len(wrt) :], expected, strict=True):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert np.abs(want).max() > 1e-3


def seeded_loss(b: GraphBuilder, y, c_name="c"):
    """`sum(Re(y * c))` for a complex `y` (c an input), `sum(y * c)` for a real one."""
    t = y.type
    c = b.input(c_name, t.get_shape(), t.element_type)
    return b.reduce(b.cast(b.mul(y, c), "f32"), kind="sum", axes=list(range(len(t.get_shape()))))


def complex_param(b, name, shape):
    return b.param(name, shape, "complex<f32>")


@pytest.mark.parametrize("op", ["conjugate", "complex_norm_sq"])
def test_unary_complex_rules_match_jax(op):
    c = crand(*Z.shape) if op == "conjugate" else RNG.standard_normal(Z.shape).astype(np.float32)
    grad_vs_jax(lambda b: b.output(seeded_loss(b, getattr(b, op)(complex_param(b, "z", Z.shape)))), [Z, c])


def test_norm_sq_backward_rule_matches_jax_for_both_operands():
    g = RNG.standard_normal(Z.shape).astype(np.float32)

    def build(b):
        z, gp = complex_param(b, "z", Z.shape), b.param("g", Z.shape)
        b.output(seeded_loss(b, b.complex_norm_sq_backward(z, gp)))

    grad_vs_jax(build, [Z, g, crand(*Z.shape)])


@pytest.mark.parametrize(("inverse", "norm"), [(False, "backward"), (True, "forward"), (True, "ortho")])
def test_fft_rule_matches_jax_on_complex_values(inverse, norm):
    def build(b):
        b.output(seeded_loss(b, b.fft(complex_param(b, "z", Z.shape), inverse=inverse, norm=norm)))

    grad_vs_jax(build, [Z, crand(*Z.shape)])


@pytest.mark.parametrize(("inverse", "norm"), [(False, "backward"), (True, "backward"), (False, "ortho")])
def test_fft_rule_matches_jax_on_the_real_layout(inverse, norm):
    x = interleave(Z)

    def build(b):
        b.output(seeded_loss(b, b.fft(b.param("x", x.shape), inverse=inverse, norm=norm)))

    grad_vs_jax(build, [x, RNG.standard_normal(x.shape).astype(np.float32)])
