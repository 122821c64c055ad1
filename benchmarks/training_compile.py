"""Training-compile benchmark: the size and the cost of the gradient of an N-layer LLaMA loss.

    python benchmarks/training_compile.py [--max-layers 32] [--repeat 5]

For N = 1, 2, 4, ... up to --max-layers it builds `build_llama_loss(N)` (the
decoder, an LM head and a mean softmax-cross-entropy loss, in `@llama`), writes
it to a temporary .mlir file and measures:

* ops: MIR ops of the forward function, of the gradient function `@llama_grad`
  after `rlx-prepare-ad,rlx-grad{func=llama},rlx-dce` (it recomputes the forward,
  as RLX's does), and its backward part (gradient minus forward); the ratios
  backward/forward and gradient/forward must stay flat as N grows (linear size);
* in process (best of --repeat, each on a freshly parsed module): the three passes
  of the training compile, and their total;
* the Python function calls the three passes make per forward op (`cProfile`):
  a count that machine load does not change, so it shows linear scaling even
  when wall times are noisy;
* command lines (best of --repeat, start-up included): `rlx-opt FILE -p
  'rlx-prepare-ad,rlx-grad{func=llama},rlx-dce'` (parse, verify after each pass,
  print both functions) against stock `xdsl-opt FILE` (parse, verify, print the
  forward), as CPU time of the subprocess (user + system, less sensitive to other
  jobs than wall time) and as wall time; and the passes alone against the stock
  CPU time.

With `--rows jvp,hvp`, two more tables: `rlx-prepare-ad,rlx-jvp{func=llama},rlx-dce`
(tangents along every parameter) and `rlx-prepare-ad,rlx-hvp{func=llama},rlx-dce`
(forward over reverse): MIR ops of `@llama_jvp` / `@llama_hvp` per forward op, the
passes' best in-process time, and `rlx-opt` against stock `xdsl-opt` (CPU s).

With `--rows vmap` (or `grad,vmap`), the batching pass: `rlx-vmap{func=llama
batched=x size=8}` on the same loss (the losses of 8 input sequences):
MIR ops of `@llama_vmap` per forward op, the pass in process, and `rlx-opt FILE -p
VMAP` against stock `xdsl-opt FILE` (CPU time of the subprocess).

Nothing here asserts on timings; the numbers are for reading (see README.md).
"""

from __future__ import annotations

import argparse
import cProfile
import os
import platform
import pstats
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import xdsl
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

sys.path.insert(0, str(Path(__file__).parent))
from compile_time import CONFIG, best_time, layer_counts, print_module, xdsl_opt

from rlx_xdsl.autodiff.grad import GradPass
from rlx_xdsl.autodiff.prepare import PrepareAdPass
from rlx_xdsl.batching.vmap import VmapPass
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.testing.training import build_llama_loss
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass

PIPELINE = "rlx-prepare-ad,rlx-grad{func=llama},rlx-dce"
PASSES = (PrepareAdPass(), GradPass(func="llama"), DeadCodeEliminationPass())
VMAP = "rlx-vmap{func=llama batched=x size=8}"
VMAP_PASS = VmapPass(func="llama", batched=("x",), size=8)


def function_ops(module: ModuleOp, name: str) -> int:
    """The ops in `@name`'s body, its `func.return` excluded."""
    function = find_function(module, name)
    return sum(1 for op in function.walk() if op is not function and not isinstance(op, func.ReturnOp))


def rlx_opt() -> str:
    return str(Path(sys.executable).parent / "rlx-opt")


def wall(command: list[str], repeat: int) -> float:
    return best_time(lambda: subprocess.run(command, check=True, capture_output=True), repeat)


def cpu(command: list[str], repeat: int) -> float:
    """Best user + system CPU time of the command, over `repeat` runs."""
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(command, check=True, capture_output=True)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(times)


def calls(text: str, name: str, ctx) -> int:
    """Python function calls made by the three passes on a fresh module."""
    module = parse_module(text, name, ctx)
    profile = cProfile.Profile()
    profile.enable()
    for pass_ in PASSES:
        pass_.apply(ctx, module)
    profile.disable()
    return pstats.Stats(profile).total_calls


def loss_file(layers: int, workdir: Path) -> tuple[str, str]:
    """The N-layer LLaMA loss written to `workdir`: its text and file name (what is timed reads it)."""
    path = workdir / f"llama_loss_{layers}.mlir"
    path.write_text(print_module(build_llama_loss(layers, **CONFIG)))
    return path.read_text(), str(path)


def measure(layers: int, repeat: int, workdir: Path) -> dict:
    text, name = loss_file(layers, workdir)
    ctx = make_context()
    module = parse_module(text, name, ctx)
    for pass_ in PASSES:
        pass_.apply(ctx, module)
    forward, gradient = function_ops(module, "llama"), function_ops(module, "llama_grad")
    seconds = {
        p.name: best_time(lambda m, p=p: p.apply(ctx, m), repeat, setup=lambda: _prefix(text, name, ctx, p))
        for p in PASSES
    }
    out = str(workdir / "out.mlir")
    ours, stock = [rlx_opt(), name, "-p", PIPELINE, "-o", out], [xdsl_opt(), name, "-o", out]
    return {
        "layers": layers,
        "forward": forward,
        "gradient": gradient,
        "seconds": seconds,
        "calls": calls(text, name, ctx),
        "rlx_opt": wall(ours, repeat),
        "stock": wall(stock, repeat),
        "rlx_opt_cpu": cpu(ours, repeat),
        "stock_cpu": cpu(stock, repeat),
    }


def _prefix(text: str, name: str, ctx, upto) -> ModuleOp:
    """A fresh module with the passes before `upto` applied (the setup of its timing)."""
    module = parse_module(text, name, ctx)
    for pass_ in PASSES:
        if pass_ is upto:
            break
        pass_.apply(ctx, module)
    return module


def measure_vmap(layers: int, repeat: int, workdir: Path) -> dict:
    """The batching pass on the N-layer loss: its output size, in-process time, command line."""
    text, name = loss_file(layers, workdir)
    ctx = make_context()
    module = parse_module(text, name, ctx)
    VMAP_PASS.apply(ctx, module)
    out = str(workdir / "out.mlir")
    return {
        "layers": layers,
        "forward": function_ops(module, "llama"),
        "batched": function_ops(module, "llama_vmap"),
        "pass": best_time(lambda m: VMAP_PASS.apply(ctx, m), repeat, setup=lambda: parse_module(text, name, ctx)),
        "rlx_opt_cpu": cpu([rlx_opt(), name, "-p", VMAP, "-o", out], repeat),
        "stock_cpu": cpu([xdsl_opt(), name, "-o", out], repeat),
    }


def vmap_report(rows: list[dict], repeat: int) -> list[str]:
    lines = [
        f"# rlx-vmap: {VMAP} on build_llama_loss(N); best of {repeat} runs",
        "# fwd/vmap = MIR ops of @llama / of @llama_vmap; command lines as CPU s (user + system)",
        f"{'layers':>6} {'fwd':>6} {'vmap':>6} {'vmap/fwd':>9} {'pass s':>8} {'us/fwd op':>10} "
        f"{'rlx-opt cpu':>12} {'stock cpu':>10} {'rlx-opt/stock':>14}",
    ]
    for r in rows:
        lines.append(
            f"{r['layers']:>6} {r['forward']:>6} {r['batched']:>6} {r['batched'] / r['forward']:9.2f} "
            f"{r['pass']:8.4f} {r['pass'] / r['forward'] * 1e6:10.1f} {r['rlx_opt_cpu']:12.3f} "
            f"{r['stock_cpu']:10.3f} {r['rlx_opt_cpu'] / r['stock_cpu']:14.2f}"
        )
    return lines


def report(rows: list[dict], startup: tuple[float, float], repeat: int) -> list[str]:
    """The tables, as lines of text."""
    config = ", ".join(f"{k}={v}" for k, v in CONFIG.items())
    lines = [
        f"# rlx-xdsl training compile: build_llama_loss(N, {config}), pipeline {PIPELINE}",
        f"# best of {repeat} runs; xDSL {xdsl.__version__}; Python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; {platform.machine()}",
        "# fwd/grad/bwd = MIR ops of @llama / of @llama_grad / of its backward part (grad - fwd)",
        f"# start-up CPU time on an empty module: rlx-opt -p rlx-prepare-ad {startup[0]:.3f} s, "
        f"xdsl-opt {startup[1]:.3f} s",
        "",
        f"{'layers':>6} {'fwd':>6} {'grad':>6} {'bwd':>6} {'bwd/fwd':>8} {'grad/fwd':>9}",
    ]
    for r in rows:
        backward = r["gradient"] - r["forward"]
        lines.append(
            f"{r['layers']:>6} {r['forward']:>6} {r['gradient']:>6} {backward:>6} "
            f"{backward / r['forward']:8.2f} {r['gradient'] / r['forward']:9.2f}"
        )
    names = [p.name for p in PASSES]
    lines += [
        "",
        f"{'layers':>6} " + " ".join(f"{n:>15}" for n in names) + f" {'passes':>8} {'us/fwd op':>10}"
        f" {'calls/fwd op':>13}",
    ]
    for r in rows:
        total = sum(r["seconds"].values())
        lines.append(
            f"{r['layers']:>6} "
            + " ".join(f"{r['seconds'][n]:15.4f}" for n in names)
            + f" {total:8.4f} {total / r['forward'] * 1e6:10.1f} {r['calls'] / r['forward']:13.0f}"
        )
    lines += [
        "",
        "# command lines: CPU s (user + system) and wall s; ratios of CPU times",
        f"{'layers':>6} {'rlx-opt cpu':>12} {'stock cpu':>10} {'rlx-opt wall':>13} {'stock wall':>11} "
        f"{'rlx-opt/stock':>14} {'passes/stock':>13}",
    ]
    for r in rows:
        passes = sum(r["seconds"].values())
        lines.append(
            f"{r['layers']:>6} {r['rlx_opt_cpu']:12.3f} {r['stock_cpu']:10.3f} {r['rlx_opt']:13.3f} "
            f"{r['stock']:11.3f} {r['rlx_opt_cpu'] / r['stock_cpu']:14.2f} {passes / r['stock_cpu']:13.2f}"
        )
    return lines


FORWARD_MODES = {
    "jvp": ("rlx-prepare-ad,rlx-jvp{func=llama},rlx-dce", "llama_jvp"),
    "hvp": ("rlx-prepare-ad,rlx-hvp{func=llama},rlx-dce", "llama_hvp"),
}
"""The forward-mode rows: each pipeline and the function it adds."""


def measure_forward_mode(mode: str, layers: int, repeat: int, workdir: Path) -> dict:
    """Ops per forward op, in-process pass time and command-line CPU time of one forward-mode pipeline."""
    from rlx_xdsl.transforms import get_all_passes
    from rlx_xdsl.transforms.pipeline import parse_pipeline

    pipeline, added = FORWARD_MODES[mode]
    text, name = loss_file(layers, workdir)
    ctx = make_context()
    passes = parse_pipeline(pipeline, get_all_passes()).passes

    def run(module: ModuleOp) -> None:
        for pass_ in passes:
            pass_.apply(ctx, module)

    module = parse_module(text, name, ctx)
    run(module)
    out = str(workdir / "out.mlir")
    return {
        "layers": layers,
        "forward": function_ops(module, "llama"),
        "added": function_ops(module, added),
        "seconds": best_time(run, repeat, setup=lambda: parse_module(text, name, ctx)),
        "rlx_opt_cpu": cpu([rlx_opt(), name, "-p", pipeline, "-o", out], repeat),
        "stock_cpu": cpu([xdsl_opt(), name, "-o", out], repeat),
    }


def report_forward_mode(mode: str, rows: list[dict]) -> list[str]:
    lines = [
        "",
        f"# rlx-{mode}: {FORWARD_MODES[mode][0]}; ops = MIR ops of @{FORWARD_MODES[mode][1]}",
        f"{'layers':>6} {'fwd':>6} {'ops':>6} {'ops/fwd':>8} {'passes s':>9} {'us/fwd op':>10} "
        f"{'rlx-opt cpu':>12} {'stock cpu':>10} {'rlx-opt/stock':>14}",
    ]
    for r in rows:
        lines.append(
            f"{r['layers']:>6} {r['forward']:>6} {r['added']:>6} {r['added'] / r['forward']:8.2f} "
            f"{r['seconds']:9.4f} {r['seconds'] / r['forward'] * 1e6:10.1f} {r['rlx_opt_cpu']:12.3f} "
            f"{r['stock_cpu']:10.3f} {r['rlx_opt_cpu'] / r['stock_cpu']:14.2f}"
        )
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="Size and cost of the gradient of N-layer LLaMA losses.")
    parser.add_argument("--max-layers", type=int, default=32)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument(
        "--rows", default="grad", help="comma-separated: grad (rlx-grad), jvp, hvp (forward mode), vmap (rlx-vmap)"
    )
    args = parser.parse_args(argv)
    wanted = set(args.rows.split(","))
    if not wanted <= {"grad", "jvp", "hvp", "vmap"}:
        parser.error(f"--rows takes grad, jvp, hvp and vmap, got {args.rows}")
    if xdsl_opt() is None:
        parser.error("xdsl-opt is not installed next to this Python")
    with tempfile.TemporaryDirectory(prefix="rlx-train-bench-") as tmp:
        workdir = Path(tmp)
        empty = workdir / "empty.mlir"
        empty.write_text("builtin.module {}\n")
        out = str(workdir / "out.mlir")
        startup = (
            # rlx-prepare-ad imports what the pipeline needs (rlx-grad needs a function to run on)
            cpu([rlx_opt(), str(empty), "-p", "rlx-prepare-ad", "-o", out], args.repeat),
            cpu([xdsl_opt(), str(empty), "-o", out], args.repeat),
        )
        rows, vmap_rows = [], []
        forward_rows: dict[str, list] = {mode: [] for mode in FORWARD_MODES if mode in wanted}
        for n in layer_counts(args.max_layers):
            print(f"measuring {n} layer(s)...", file=sys.stderr)
            if "grad" in wanted:
                rows.append(measure(n, args.repeat, workdir))
            for mode, measured in forward_rows.items():
                measured.append(measure_forward_mode(mode, n, args.repeat, workdir))
            if "vmap" in wanted:
                vmap_rows.append(measure_vmap(n, args.repeat, workdir))
    lines: list[str] = []
    if rows:
        lines += report(rows, startup, args.repeat)
    for mode, measured in forward_rows.items():
        lines += report_forward_mode(mode, measured)
    if vmap_rows:
        lines += vmap_report(vmap_rows, args.repeat)
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
