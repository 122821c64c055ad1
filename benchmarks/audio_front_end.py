"""Audio front end benchmark: Whisper's log-mel spectrogram as a MIR graph.

    python benchmarks/audio_front_end.py                     # 1 s of 16 kHz audio, 400-point frames, 80 mels
    python benchmarks/audio_front_end.py --seconds 5 --repeat 3
    python benchmarks/audio_front_end.py --save front_end.mlir   # then: rlx-run front_end.mlir

The graph takes windowed frames `[T, N]` and mel filters `[N/2 + 1, M]` and computes
Whisper's `log_mel_spectrogram`: `fft` → `|·|²` → `log_mel` → the 8-decade floor → `(x + 4) / 4`.
Two forms of the same graph:

* `real`: RLX's interleaved real layout throughout (frames interleaved with zero
  imaginary parts, `mir.fft` on `[T, 2N]`, `|·|²` as a sum of squared pairs): it lowers
  to linalg (the FFT as a DFT contraction) and runs on IREE;
* `complex`: `mir.cast` to complex<f32>, `mir.fft`, `mir.complex_norm_sq`: it lowers with
  upstream's `complex` dialect (the FFT as a contraction with a complex DFT matrix).

Rows: the numpy interpreter and IREE CPU (`llvm-cpu`, host features, `local-task`) on both
forms, and Whisper's own formula in PyTorch
(`torch.stft`, centred with reflect padding, last frame dropped) as the reference of
agreement. Times are medians of `--repeat` calls after a warm-up; nothing asserts on
timings. The mel filters are Whisper's, `librosa.filters.mel(sr=16000, n_fft=400,
n_mels=80)` (Slaney scale and area norm), when librosa is installed; otherwise triangular
HTK filters written out here. Both sides use the same ones.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.run import run_function

RATE, N_FFT, HOP, N_MELS = 16000, 400, 160, 80
"""Whisper's front end: 16 kHz, 25 ms frames every 10 ms, 80 mel bins."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(call: Callable[[], object], repeat: int) -> tuple[float, object]:
    result = call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def mel_filters(n_fft: int = N_FFT, n_mels: int = N_MELS, rate: int = RATE) -> np.ndarray:
    """Mel filters `[n_fft // 2 + 1, n_mels]`: librosa's (Whisper's) if installed, else HTK triangles."""
    try:
        import librosa
    except ImportError:
        log("librosa is not installed: using triangular HTK mel filters, not Whisper's")
        return htk_mel_filters(n_fft, n_mels, rate)
    return np.ascontiguousarray(librosa.filters.mel(sr=rate, n_fft=n_fft, n_mels=n_mels).T)


def htk_mel_filters(n_fft: int = N_FFT, n_mels: int = N_MELS, rate: int = RATE) -> np.ndarray:
    """Triangular HTK mel filters `[n_fft // 2 + 1, n_mels]` (no area normalisation)."""
    mel = lambda f: 2595 * np.log10(1 + f / 700)  # noqa: E731
    hz = lambda m: 700 * (10 ** (m / 2595) - 1)  # noqa: E731
    edges = hz(np.linspace(mel(0), mel(rate / 2), n_mels + 2))
    freqs = np.linspace(0, rate / 2, n_fft // 2 + 1)
    rising = (freqs[:, None] - edges[None, :-2]) / (edges[1:-1] - edges[:-2])
    falling = (edges[None, 2:] - freqs[:, None]) / (edges[2:] - edges[1:-1])
    return np.maximum(0, np.minimum(rising, falling)).astype(np.float32)


def chirp(seconds: float) -> np.ndarray:
    t = np.arange(int(seconds * RATE)) / RATE
    return (0.5 * np.sin(2 * np.pi * (100 + 2000 * t / seconds) * t)).astype(np.float32)


def frames_of(audio: np.ndarray) -> np.ndarray:
    """Periodic-Hann-windowed frames `[T, N_FFT]` as Whisper's `torch.stft` call makes them
    (center=True: reflect-padded by N_FFT / 2), without the last frame, which Whisper drops."""
    window = np.hanning(N_FFT + 1)[:-1].astype(np.float32)
    padded = np.pad(audio, N_FFT // 2, mode="reflect")
    starts = range(0, len(padded) - N_FFT + 1, HOP)
    return np.stack([padded[s : s + N_FFT] * window for s in starts][:-1])


def whisper_tail(b: GraphBuilder, log_spec):
    """`max(x, max(x) - 8)`, then `(x + 4) / 4`."""
    floor = b.sub(b.reduce(log_spec, kind="max", axes=[0, 1]), b.constant(np.float32(8)))
    return b.div(b.add(b.max(log_spec, floor), b.constant(np.float32(4))), b.constant(np.float32(4)))


def build(frames: int, form: str):
    b = GraphBuilder("front_end")
    x, filters = b.input("frames", [frames, N_FFT]), b.input("filters", [N_FFT // 2 + 1, N_MELS])
    bins = N_FFT // 2 + 1
    if form == "complex":
        spectrum = b.fft(b.cast(x, "complex<f32>"))
        power = b.complex_norm_sq(b.narrow(spectrum, axis=1, start=0, len=bins))
    else:
        column = b.reshape(x, new_shape=[frames, N_FFT, 1])
        pairs = b.concat(column, b.constant(np.zeros((frames, N_FFT, 1), np.float32)), axis=2)
        spectrum = b.fft(b.reshape(pairs, new_shape=[frames, 2 * N_FFT]))
        kept = b.narrow(b.reshape(spectrum, new_shape=[frames, N_FFT, 2]), axis=1, start=0, len=bins)
        power = b.reduce(b.mul(kept, kept), kind="sum", axes=[2])
    b.output(whisper_tail(b, b.log_mel(power, filters)))
    return b.module()


def whisper_reference(audio: np.ndarray, filters: np.ndarray) -> np.ndarray:
    import torch

    window = torch.hann_window(N_FFT)
    stft = torch.stft(torch.from_numpy(audio), N_FFT, HOP, window=window, return_complex=True)
    log_spec = torch.clamp(torch.from_numpy(filters.T) @ stft[..., :-1].abs() ** 2, min=1e-10).log10()
    log_spec = torch.maximum(log_spec, log_spec.max() - 8.0)
    return ((log_spec + 4.0) / 4.0).numpy().T


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--no-iree", action="store_true")
    parser.add_argument("--save", metavar="FILE", help="write the real-layout graph as MIR text")
    args = parser.parse_args()

    audio = chirp(args.seconds)
    frames, filters = frames_of(audio), mel_filters()
    inputs = [frames, filters]
    reference = whisper_reference(audio, filters)
    log(f"{frames.shape[0]} frames of {N_FFT} samples, {N_MELS} mels")
    modules = {form: build(frames.shape[0], form) for form in ("real", "complex")}
    if args.save:
        with open(args.save, "w") as f:
            f.write(print_ir(modules["real"]))

    rows = []
    for form, module in modules.items():
        seconds, (out,) = timed(lambda m=module: run_function(m, "front_end", inputs), args.repeat)
        rows.append((f"interpreter ({form})", seconds, out))
    if not args.no_iree:
        from rlx_xdsl.backends.iree import IreeModule

        for form, module in modules.items():
            start = time.perf_counter()
            compiled = IreeModule(module)
            log(f"IREE lowering + compile ({form}): {time.perf_counter() - start:.2f} s")
            seconds, (out,) = timed(lambda c=compiled: c.run("front_end", inputs), args.repeat)
            rows.append((f"IREE CPU ({form})", seconds, out))
    import torch  # noqa: F401  (imported before timing the reference)

    seconds, out = timed(lambda: whisper_reference(audio, filters), args.repeat)
    rows.append(("PyTorch (Whisper's formula)", seconds, out))

    print("| run | time (ms) | max abs difference from Whisper's formula |")
    print("|---|---|---|")
    for name, seconds, out in rows:
        print(f"| {name} | {seconds * 1e3:.2f} | {np.abs(out - reference).max():.2e} |")


if __name__ == "__main__":
    main()
