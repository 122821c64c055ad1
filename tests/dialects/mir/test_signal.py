"""Complex and signal MIR ops against independent oracles: numpy.fft, and jax.vjp for
their VJP rules (JAX's complex convention: the transpose, not the adjoint)."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir import signal
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.ir.graph import graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import run_op

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


# --- log_mel: Whisper's front end -------------------------------------------------------

N_FFT, HOP, N_MELS, RATE = 64, 16, 8, 4000


def mel_filters(n_fft=N_FFT, n_mels=N_MELS, rate=RATE):
    """Triangular HTK mel filters `[n_fft // 2 + 1, n_mels]`, written out for the test."""
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    hz = lambda m: 700 * (10 ** (m / 2595) - 1)  # noqa: E731
    edges = hz(np.linspace(mel(0), mel(rate / 2), n_mels + 2))
    freqs = np.linspace(0, rate / 2, n_fft // 2 + 1)
    rising = (freqs[:, None] - edges[None, :-2]) / (edges[1:-1] - edges[:-2])
    falling = (edges[None, 2:] - freqs[:, None]) / (edges[2:] - edges[1:-1])
    return np.maximum(0, np.minimum(rising, falling)).astype(np.float32)


def chirp(n=512, rate=RATE):
    t = np.arange(n) / rate
    return np.sin(2 * np.pi * (100 + 800 * t) * t).astype(np.float32)


def whisper_log_mel(audio, filters):
    """Whisper's `log_mel_spectrogram` formula (torch.stft, |.|^2, clamp, log10, floor, scale)."""
    import torch

    window = torch.hann_window(N_FFT)
    stft = torch.stft(torch.from_numpy(audio), N_FFT, HOP, window=window, center=False, return_complex=True)
    magnitudes = stft.abs() ** 2
    mel_spec = torch.from_numpy(filters.T) @ magnitudes
    log_spec = torch.clamp(mel_spec, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).numpy().T  # frames by mel bins


def test_an_audio_front_end_of_mir_ops_matches_whispers_formula():
    """Framed, windowed audio -> fft -> |.|^2 -> log_mel -> Whisper's floor and scale."""
    audio, filters = chirp(), mel_filters()
    starts = range(0, len(audio) - N_FFT + 1, HOP)
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)  # periodic Hann, as torch's
    frames = np.stack([audio[s : s + N_FFT] * window for s in starts])
    b = GraphBuilder("f")
    x, w = b.input("frames", frames.shape), b.input("filters", filters.shape)
    spectrum = b.fft(b.cast(x, "complex<f32>"))
    power = b.complex_norm_sq(b.narrow(spectrum, axis=1, start=0, len=N_FFT // 2 + 1))
    log_spec = b.log_mel(power, w)
    floor = b.sub(b.reduce(log_spec, kind="max", axes=[0, 1]), b.constant(np.float32(8)))
    scaled = b.div(b.add(b.max(log_spec, floor), b.constant(np.float32(4))), b.constant(np.float32(4)))
    b.output(scaled)
    (out,) = run_function(b.module(), "f", [frames, filters])
    np.testing.assert_allclose(out, whisper_log_mel(audio, filters), rtol=1e-4, atol=1e-4)


def test_log_mel_clamps_silence_to_eps():
    spectrum = np.zeros((2, 3), np.float32)
    spectrum[1] = [1, 2, 3]
    out = run_op("log_mel", [spectrum, np.ones((3, 2), np.float32)], eps=1e-3)
    np.testing.assert_allclose(out, [[-3, -3], [np.log10(6)] * 2], rtol=1e-6)


def test_log_mel_rule_matches_jax_for_spectrum_and_filters():
    """Some mel energies fall below eps (no gradient there), the rest do not. The spectrum's
    gradient is `log_mel_backward`'s kernel, so this checks it against JAX too."""
    spectrum = RNG.random((2, 3, 5)).astype(np.float32)
    spectrum[0, 1] = 0
    filters = RNG.random((5, 4)).astype(np.float32)

    def build(b):
        b.output(seeded_loss(b, b.log_mel(b.param("s", spectrum.shape), b.param("w", filters.shape), eps=1e-3)))

    grad_vs_jax(build, [spectrum, filters, RNG.standard_normal((2, 3, 4)).astype(np.float32)])


@pytest.mark.parametrize("norm", list(signal.FftNorm))
@pytest.mark.parametrize("inverse", [False, True])
def test_the_lowering_dft_matrix_is_numpy_fft_on_the_real_layout(inverse, norm):
    from rlx_xdsl.conversions.mir_to_linalg.signal import dft_matrix

    z = Z.astype(np.complex128)
    expected = interleave((np.fft.ifft if inverse else np.fft.fft)(z, norm=str(norm)))
    got = interleave(z) @ dft_matrix(z.shape[-1], inverse, norm).T
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
