"""Execution benchmark: the LLaMA graph on the numpy interpreter, on IREE, and in PyTorch eager.

    python benchmarks/execution.py                      # hidden 512, 8 heads, 4 layers, seq 128
    python benchmarks/execution.py --layers 1 --seq 32  # quick
    python benchmarks/execution.py --compile-sizes 1,2,4

One process builds `build_llama(layers, ...)` and random weights (scaled so the
activations stay tame), then, side by side:

* `interpreter`: `run_function` on the numpy reference interpreter;
* `IREE (unfused MIR)`: the graph lowered by `rlx-convert-mir-to-linalg`, compiled
  by `iree-compile` for the host CPU (`llvm-cpu`, host features) and run with the
  `local-task` driver (all cores); compile time reported separately;
* `IREE (fused MIR)`: the same after `rlx-fusion-pipeline{target=best}` (fused ops lower
  through their expansions, an elementwise region to one `linalg.generic`);
* `PyTorch eager`: the same decoder written with torch ops (CPU, `torch.no_grad`),
  on the same weights (benchmark-only dependency: `pip install torch`).

Each run time is the median of `--repeat` calls after one warm-up call. Outputs
are cross-checked against the interpreter (relative to the output's magnitude).
Then the compile time (lowering + iree-compile) is measured per graph size.
Nothing asserts on timings.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from rlx_xdsl.backends import iree as iree_backend
from rlx_xdsl.context import make_context
from rlx_xdsl.ir.graph import random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import RMS_EPS, build_llama, rope_tables
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

FUSION_TARGET = "best"
"""The `rlx-fusion-pipeline` target of the fused row."""


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def timed(call: Callable[[], object], repeat: int) -> tuple[float, object]:
    """Median seconds of `repeat` calls after a warm-up call, and the last result."""
    result = call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = call()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def llama_inputs(module, seq: int, head_dim: int) -> list[np.ndarray]:
    """Random inputs; weights scaled by 1/sqrt(fan-in) so that 4 layers stay finite."""
    inputs = random_inputs(module.ops.first, seed=0)
    inputs[1], inputs[2] = rope_tables(seq, head_dim)
    out = inputs[:3]
    for x in inputs[3:]:
        out.append((x / np.sqrt(x.shape[0])).astype(np.float32) if x.ndim == 2 else x)
    return out


# PyTorch eager: the same decoder, written with torch ops -------------------------------


def torch_llama(config: dict, layers: int):
    """A function of the MIR graph's arguments computing the same decoder in torch."""
    import torch

    n_heads, n_kv = config["n_heads"], config["n_kv_heads"]
    dim, batch, seq = config["dim"], config["batch"], config["seq"]
    head_dim = dim // n_heads

    def rms_norm(x, gamma, beta):
        return x / torch.sqrt((x * x).mean(-1, keepdim=True) + RMS_EPS) * gamma + beta

    def heads(x, count):
        return x.reshape(batch, seq, count, head_dim).transpose(1, 2)

    def rope(x, cos, sin):
        half = head_dim // 2
        x1, x2 = x[..., :half], x[..., half:]
        return torch.cat([x1 * cos - x2 * sin, x2 * cos + x1 * sin], dim=-1)

    def forward(x, cos, sin, *params):
        for i in range(layers):
            g1, b1, wq, wk, wv, wo, g2, b2, wg, wu, wd = params[11 * i : 11 * (i + 1)]
            h = rms_norm(x, g1, b1)
            q = rope(heads(h @ wq, n_heads), cos, sin)
            k = rope(heads(h @ wk, n_kv), cos, sin).repeat_interleave(n_heads // n_kv, dim=1)
            v = heads(h @ wv, n_kv).repeat_interleave(n_heads // n_kv, dim=1)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + a.transpose(1, 2).reshape(batch, seq, dim) @ wo
            h = rms_norm(x, g2, b2)
            x = x + (torch.nn.functional.silu(h @ wg) * (h @ wu)) @ wd
        return x

    def run(inputs: list[np.ndarray]) -> np.ndarray:
        with torch.no_grad():
            return forward(*(torch.from_numpy(a) for a in inputs)).numpy()

    return run


# The benchmark ---------------------------------------------------------------------------


def relative_error(got: np.ndarray, want: np.ndarray) -> float:
    return float(np.abs(got.astype(np.float64) - want).max() / max(1.0, np.abs(want).max()))


def execution_table(config: dict, layers: int, repeat: int) -> list[str]:
    module = build_llama(layers, **config)
    inputs = llama_inputs(module, config["seq"], config["dim"] // config["n_heads"])
    rows = []

    log("interpreter ...")
    seconds, (reference,) = timed(lambda: run_function(module, "llama", inputs), max(1, repeat // 4))
    reference = reference.astype(np.float64)
    rows.append(("numpy interpreter", seconds, 0.0, None))

    log("IREE (unfused MIR): lowering and compiling ...")
    start = time.perf_counter()
    compiled = iree_backend.IreeModule(module)
    compile_seconds = time.perf_counter() - start
    seconds, (got,) = timed(lambda: compiled.run("llama", inputs), repeat)
    rows.append(("IREE llvm-cpu, unfused MIR", seconds, relative_error(got, reference), compile_seconds))

    log(f"IREE (fused MIR, target={FUSION_TARGET}): fusing, lowering and compiling ...")
    fused = module.clone()
    FusionPipelinePass(target=FUSION_TARGET).apply(make_context(), fused)
    start = time.perf_counter()
    fused_compiled = iree_backend.IreeModule(fused)
    fused_compile = time.perf_counter() - start
    seconds, (got,) = timed(lambda: fused_compiled.run("llama", inputs), repeat)
    name = f"IREE llvm-cpu, fused MIR (`rlx-fusion-pipeline{{target={FUSION_TARGET}}}`)"
    rows.append((name, seconds, relative_error(got, reference), fused_compile))

    try:
        import torch

        run_torch = torch_llama(config, layers)
        log("PyTorch eager ...")
        seconds, got = timed(lambda: run_torch(inputs), repeat)
        rows.append((f"PyTorch {torch.__version__} eager ({torch.get_num_threads()} threads)", seconds,
                     relative_error(got, reference), None))  # fmt: skip
    except ImportError:
        rows.append(("PyTorch eager (torch not installed)", None, None, None))

    torch_seconds = next((r[1] for r in rows if r[0].startswith("PyTorch") and r[1]), None)
    lines = [
        "| backend | run time (ms) | vs PyTorch eager | max rel. error vs interpreter | compile (s) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, seconds, error, compile_s in rows:
        if seconds is None:
            lines.append(f"| {name} | not measured | | | |")
            continue
        ratio = f"{seconds / torch_seconds:.2f}x" if torch_seconds else ""
        err = "reference" if error == 0.0 and name.startswith("numpy") else f"{error:.1e}"
        comp = f"{compile_s:.2f}" if compile_s is not None else ""
        lines.append(f"| {name} | {seconds * 1e3:.2f} | {ratio} | {err} | {comp} |")
    return lines


def compile_table(config: dict, sizes: list[int]) -> list[str]:
    lines = [
        "| layers | MIR ops | lowered ops | lowering (s) | iree-compile (s) | total (s) |",
        "|---:|---:|---:|---:|---:|---:|",
    ]
    for n in sizes:
        log(f"compile time, {n} layers ...")
        module = build_llama(n, **config)
        mir_ops = sum(1 for _ in module.walk())
        start = time.perf_counter()
        text = iree_backend.lowered_text(module)
        lowering = time.perf_counter() - start
        lowered_ops = text.count(" = ") + text.count('"func.return"')
        iree_backend._COMPILED.clear()  # time a real compile
        start = time.perf_counter()
        iree_backend.compile_text(text, iree_backend.DEVICES["cpu"])
        compiling = time.perf_counter() - start
        lines.append(
            f"| {n} | {mir_ops} | {lowered_ops} | {lowering:.2f} | {compiling:.2f} | {lowering + compiling:.2f} |"
        )
    return lines


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--dim", type=int, default=512)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=8)
    parser.add_argument("--ffn", type=int, default=1408)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--compile-sizes", default="1,2,4", help="layer counts of the compile-time table")
    args = parser.parse_args(argv)
    config = {"batch": args.batch, "seq": args.seq, "dim": args.dim, "n_heads": args.heads,
              "n_kv_heads": args.kv_heads, "ffn": args.ffn}  # fmt: skip
    from importlib.metadata import version

    print(f"# {platform.machine()}, Python {platform.python_version()}, "
          f"iree-base-compiler {version('iree-base-compiler')}, numpy {np.__version__}")  # fmt: skip
    print(f"# LLaMA: {args.layers} layers, " + ", ".join(f"{k} {v}" for k, v in config.items()))
    print()
    print("\n".join(execution_table(config, args.layers, args.repeat)))
    print()
    print("\n".join(compile_table(config, [int(n) for n in args.compile_sizes.split(",")])))


if __name__ == "__main__":
    main()
