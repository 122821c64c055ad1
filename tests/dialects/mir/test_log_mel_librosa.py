"""Whisper's log-mel front end as MIR ops, with librosa's mel filterbank, against Whisper's
`log_mel_spectrogram` formula written independently in numpy.

Whisper (openai/whisper, `audio.py`) computes, for 16 kHz audio:
`stft = torch.stft(audio, 400, 160, window=hann_window(400), return_complex=True)` (so
`center=True` with reflect padding), drops the last frame, takes `|stft|²`, applies the
filters it saved from `librosa.filters.mel(sr=16000, n_fft=400, n_mels=80)`, then
`log10(clamp(., 1e-10))`, floors at `max - 8` and scales by `(x + 4) / 4`.
"""

import librosa
import numpy as np
import pytest

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function

RATE, N_FFT, HOP, N_MELS = 16000, 400, 160, 80
BINS = N_FFT // 2 + 1


def chirp(seconds=0.5):
    """A linear chirp from 100 Hz to 4.1 kHz with a quiet tail, so the floor is exercised."""
    t = np.arange(int(seconds * RATE)) / RATE
    tone = 0.5 * np.sin(2 * np.pi * (100 + 4000 * t / seconds) * t)
    tone[-RATE // 20 :] *= 1e-6
    return tone.astype(np.float32)


AUDIO = chirp()
FILTERS = librosa.filters.mel(sr=RATE, n_fft=N_FFT, n_mels=N_MELS)  # [M, F], Slaney scale and norm


def whisper_formula(audio, filters):
    """Whisper's `log_mel_spectrogram` in float64 numpy: torch.stft's centred, reflect-padded
    frames become `np.pad(mode="reflect")` and strided slices; its periodic Hann window is
    written out; `rfft` keeps the `n_fft // 2 + 1` bins torch.stft returns. Mel bins by frames."""
    padded = np.pad(audio.astype(np.float64), N_FFT // 2, mode="reflect")
    count = 1 + (len(padded) - N_FFT) // HOP
    window = 0.5 - 0.5 * np.cos(2 * np.pi * np.arange(N_FFT) / N_FFT)
    frames = np.stack([padded[i * HOP : i * HOP + N_FFT] for i in range(count)]) * window
    power = np.abs(np.fft.rfft(frames, axis=1)[:-1]) ** 2  # Whisper drops the last frame
    log_spec = np.log10(np.maximum(filters.astype(np.float64) @ power.T, 1e-10))
    log_spec = np.maximum(log_spec, log_spec.max() - 8.0)
    return (log_spec + 4.0) / 4.0


def windowed_frames(audio):
    """The graph's input: centred frames (reflect padding), periodic Hann, last frame dropped."""
    padded = np.pad(audio, N_FFT // 2, mode="reflect")
    frames = np.lib.stride_tricks.sliding_window_view(padded, N_FFT)[::HOP][:-1]
    return (frames * np.hanning(N_FFT + 1)[:-1]).astype(np.float32)


def power_spectrum(b, x, form):
    """`|fft(x)|²` over the first `BINS` bins: on complex<f32>, or on RLX's real layout."""
    frames = x.type.get_shape()[0]
    if form == "complex":
        spectrum = b.fft(b.cast(x, "complex<f32>"))
        return b.complex_norm_sq(b.narrow(spectrum, axis=1, start=0, len=BINS))
    pairs = b.concat(
        b.reshape(x, new_shape=[frames, N_FFT, 1]), b.constant(np.zeros((frames, N_FFT, 1), np.float32)), axis=2
    )
    spectrum = b.fft(b.reshape(pairs, new_shape=[frames, 2 * N_FFT]))
    kept = b.narrow(b.reshape(spectrum, new_shape=[frames, N_FFT, 2]), axis=1, start=0, len=BINS)
    return b.reduce(b.mul(kept, kept), kind="sum", axes=[2])


def front_end(frames, form):
    """fft -> |.|² -> log_mel (eps 1e-10) -> max-8 floor -> (x + 4) / 4, through the interpreter."""
    b = GraphBuilder("front_end")
    x, w = b.input("frames", frames.shape), b.input("filters", [BINS, N_MELS])
    log_spec = b.log_mel(power_spectrum(b, x, form), w, eps=1e-10)
    floor = b.sub(b.reduce(log_spec, kind="max", axes=[0, 1]), b.constant(np.float32(8)))
    b.output(b.div(b.add(b.max(log_spec, floor), b.constant(np.float32(4))), b.constant(np.float32(4))))
    (out,) = run_function(b.module(), "front_end", [frames, np.ascontiguousarray(FILTERS.T)])
    return out.T  # mel bins by frames, as Whisper


@pytest.fixture(scope="module")
def expected():
    return whisper_formula(AUDIO, FILTERS)


def test_the_numpy_stft_is_torch_stft_centred_with_reflect_padding():
    """The oracle's framing is what `torch.stft` (Whisper's call, center=True) computes."""
    import torch

    audio = torch.from_numpy(AUDIO.astype(np.float64))
    stft = torch.stft(audio, N_FFT, HOP, window=torch.hann_window(N_FFT, dtype=torch.float64), return_complex=True)
    power = (stft[..., :-1].abs() ** 2).numpy()
    frames = windowed_frames(AUDIO).astype(np.float64)
    np.testing.assert_allclose(np.abs(np.fft.rfft(frames, axis=1)) ** 2, power.T, rtol=1e-4, atol=1e-6)


def test_the_oracle_spans_the_floor_and_depends_on_the_filters(expected):
    """The comparison below can fail: the output reaches the 8-decade floor and varies well
    above it, and HTK-style triangles (no Slaney area norm) give a different answer."""
    assert expected.shape == (N_MELS, len(AUDIO) // HOP)
    assert np.isclose(expected.min(), expected.max() - 2.0)  # the floor, 8 decades / 4
    assert np.mean(expected > expected.min() + 0.5) > 0.1
    htk = librosa.filters.mel(sr=RATE, n_fft=N_FFT, n_mels=N_MELS, htk=True, norm=None)
    assert np.abs(whisper_formula(AUDIO, htk) - expected).max() > 0.1


@pytest.mark.parametrize("form", ["complex", "real"])
def test_the_mir_front_end_with_librosa_filters_matches_whispers_formula(form, expected):
    got = front_end(windowed_frames(AUDIO), form)
    assert got.dtype == np.float32 and got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=0, atol=5e-5)  # measured: 1e-5 (f32 graph, f64 oracle)
