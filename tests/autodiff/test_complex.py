"""Complex autodiff end to end, against `jax.vjp` (JAX's convention: cotangents are pulled
back by the transpose of the derivative, so holomorphic ops conjugate nothing)."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.jax_oracle import jax_vjp

RNG = np.random.default_rng(2024)
C64 = "complex<f32>"
TOL = 1e-4


def crand(*shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def compare_with_jax(module, inputs):
    """Gradients of every rlx.param of `@f` (real loss, seed 1): rlx-grad's against jax.vjp's."""
    function = find_function(module, "f")
    wrt = [a.index for a in graph_args(function) if a.is_param]
    expected_loss, expected = jax_vjp(module, "f", inputs, wrt, np.float32(1))
    prepare_for_ad(module)
    build_gradient(module, "f")
    module.verify()
    loss, *grads = run_function(module, "f_grad", [*inputs, np.float32(1)])
    np.testing.assert_allclose(loss, expected_loss, rtol=TOL, atol=TOL)
    for index, got, want in zip(wrt, grads[-len(wrt) :], expected, strict=True):
        name = graph_args(function)[index].name
        assert got.dtype == want.dtype and got.shape == want.shape, name
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL, err_msg=name)
        assert np.abs(want).max() > 1e-3, "a vanishing gradient would prove nothing"


def real_sum(b: GraphBuilder, y):
    """`sum(Re(y))` over every axis: a real loss of a complex value."""
    return b.reduce(b.cast(y, "f32"), kind="sum", axes=list(range(len(y.type.get_shape()))))


def test_complex_arithmetic_matmul_and_sum_match_jax():
    """mul, div, add, sub, matmul, reduce sum and mean, and the shape ops on complex<f32>,
    with a real operand mixed in."""
    b = GraphBuilder("f")
    a, m, w = b.param("a", [2, 3], C64), b.param("m", [3, 2], C64), b.param("w", [2], "f32")
    c = b.input("c", [2, 2], C64)
    y = b.div(b.mul(a, a), b.add(a, b.constant(np.complex64(3 + 1j), C64)))
    y = b.sub(b.matmul(y, m), b.mul(c, w))  # w real: its gradient is the real part
    y = b.reduce(b.mul(y, c), kind="sum", axes=[1])
    y = b.concat(b.transpose(b.reshape(y, new_shape=[1, 2]), perm=[1, 0]), b.expand(b.narrow(a, axis=1, start=0, len=1), target_shape=[2, 1]), axis=0)
    b.output(real_sum(b, b.reduce(y, kind="mean", axes=[0])))
    compare_with_jax(b.module(), [crand(2, 3), crand(3, 2), RNG.standard_normal(2).astype(np.float32), crand(2, 2)])


def test_fft_filter_inverse_fft_power_sum_differentiates_end_to_end():
    """FFT -> complex filter -> inverse FFT -> |.|^2 -> sum, differentiated for the signal
    (RLX's real layout) and the filter."""
    b = GraphBuilder("f")
    x, h = b.param("x", [3, 16], "f32"), b.param("h", [8], C64)
    spectrum = b.fft(b.fft(x), norm="ortho")  # real layout, twice: a scaled, reversed signal
    z = b.cast(spectrum, C64)  # interleaved reals as the real parts of a complex value
    filtered = b.fft(b.mul(b.fft(b.narrow(z, axis=1, start=0, len=8)), h), inverse=True)
    power = b.complex_norm_sq(b.conjugate(filtered))
    b.output(b.reduce(power, kind="sum", axes=[0, 1]))
    x0 = RNG.standard_normal((3, 16)).astype(np.float32)
    compare_with_jax(b.module(), [x0, crand(8)])


def test_a_complex_loss_is_refused_with_a_located_error():
    from rlx_xdsl.ir.diagnostics import OpError

    b = GraphBuilder("f")
    z = b.param("z", [2], C64)
    b.output(b.conjugate(z))
    with pytest.raises(OpError, match="loss .* must be a floating-point tensor, got tensor<2xcomplex<f32>>"):
        build_gradient(b.module(), "f")


@pytest.mark.parametrize(
    ("build", "op"),
    [
        (lambda b, z: b.reduce(z, kind="prod", axes=[0]), "mir.reduce"),
        (lambda b, z: b.abs(z), "mir.abs"),
        (lambda b, z: b.max(z, z), "mir.max"),
    ],
)
def test_a_rule_not_known_to_hold_for_complex_values_is_a_located_error(build, op):
    """Rules written for real values are refused on complex ones, never silently wrong."""
    from rlx_xdsl.ir.diagnostics import OpError

    b = GraphBuilder("f")
    y = build(b, b.param("z", [2, 2], C64))
    b.output(real_sum(b, y))
    with pytest.raises(OpError, match=f"no complex VJP rule for '{op}': its rule holds for real values only"):
        build_gradient(b.module(), "f")


@pytest.mark.parametrize(
    ("build", "op"),
    [
        (lambda b, z: b.reduce(z, kind="prod", axes=[0]), "mir.reduce"),
        (lambda b, z: b.abs(z), "mir.abs"),
        (lambda b, z: b.max(z, z), "mir.max"),
    ],
)
def test_rlx_jvp_refuses_the_same_real_only_rules_on_complex_values(build, op):
    """rlx-jvp used to emit `activation_backward` on a complex abs (an invalid op, a verifier
    crash); it now refuses what rlx-grad refuses, at the op."""
    from rlx_xdsl.autodiff.jvp import build_jvp
    from rlx_xdsl.ir.diagnostics import OpError

    b = GraphBuilder("f")
    y = build(b, b.param("z", [2, 2], C64))
    b.output(real_sum(b, y))
    with pytest.raises(OpError, match=f"no complex JVP rule for '{op}': its rule holds for real values only"):
        build_jvp(b.module(), "f")
