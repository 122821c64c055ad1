"""Memory-plan quality: how close `rlx-plan-memory` gets to the lower bound, against RLX's planner.

    python benchmarks/memory_plan.py                      # LLaMA 1..32 layers, 300 random graphs
    python benchmarks/memory_plan.py --max-layers 8 --random 50 --no-timing

For the N-layer LLaMA graph (`testing.llama.build_llama`, the compile-time
benchmark's dims), planned for inference with parameters in the arena and
without them (`allocate-params=false`), and for random graphs from the test
generator (`testing.graphgen`, needs the `test` extra), it prints:

* `naive`: every buffer in its own slot; `bound`: the most bytes live at one
  step, which no plan beats (`lower_bound_bytes`);
* `arena` of `strategy=auto` and the strategy it picked, `arena/bound` (the
  goal is at most 1.05) and `arena/naive`;
* `rlx`: the arena of RLX 0.2.2's planner (`strategy=rlx`: greedy first fit by
  decreasing size, no in-place writes; tested equal to a transcription of RLX's
  algorithm), and `rlx/bound`.

Then, unless --no-timing, how planning scales (microseconds per op from 2 to
the most layers; verifying before and after planning, the difference being the
plan's proof), and the planner's share of an `rlx-opt FILE -p rlx-plan-memory`
run on the largest LLaMA graph (wall time of the whole command; the pass's own
time from `--time-passes`; best of --repeat). Nothing is asserted; see README.md.
"""

from __future__ import annotations

import argparse
import cProfile
import math
import os
import platform
import pstats
import re
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import xdsl
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.context import parse_module
from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.ir.diagnostics import verify_located
from rlx_xdsl.testing.llama import DEFAULT_DIMS, build_llama


def plan_figures(text: str, **options) -> dict[str, object]:
    """Plan a fresh parse of `text`; the figures of its (first) function's plan."""
    module = parse_module(text)
    PlanMemoryPass(**options).apply(Context(), module)
    plan = plan_of(next(iter(module.ops)))
    assert plan is not None
    return {
        "arena": plan.arena_bytes.value.data,
        "naive": plan.naive_bytes.value.data,
        "bound": plan.lower_bound_bytes.value.data,
        "strategy": plan.strategy.data if plan.strategy is not None else "-",
    }


def compare(text: str, **options) -> dict[str, object]:
    auto = plan_figures(text, **options)
    auto["rlx"] = plan_figures(text, strategy="rlx", **options)["arena"]
    return auto


def _ratio(a: int, b: int) -> float:
    return a / b if b else 1.0


# LLaMA -----------------------------------------------------------------------------------


def llama_table(layer_counts: list[int]) -> list[str]:
    lines = [
        f"{'layers':>6} {'params':>7} {'naive':>10} {'bound':>10} {'arena':>10} {'strategy':>9} "
        f"{'arena/bound':>11} {'arena/naive':>11} {'rlx':>10} {'rlx/bound':>9}"
    ]
    for layers in layer_counts:
        text = str(build_llama(layers))
        for allocate_params in (True, False):
            f = compare(text, allocate_params=allocate_params)
            lines.append(
                f"{layers:>6} {'arena' if allocate_params else 'outside':>7} {f['naive']:>10} {f['bound']:>10} "
                f"{f['arena']:>10} {f['strategy']:>9} {_ratio(f['arena'], f['bound']):>11.3f} "
                f"{_ratio(f['arena'], f['naive']):>11.3f} {f['rlx']:>10} {_ratio(f['rlx'], f['bound']):>9.3f}"
            )
    return lines


# Random graphs -------------------------------------------------------------------------------


def random_graphs(count: int, max_ops: int) -> list[str]:
    """`count` graphs from the test generator, the same ones on every run."""
    from hypothesis import HealthCheck, given, settings

    from rlx_xdsl.testing.graphgen import graphs

    drawn: list[str] = []

    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(graphs(max_ops=max_ops))
    def collect(module: ModuleOp) -> None:
        drawn.append(str(module))

    collect()
    return drawn


def random_table(texts: list[str], alignments: list[int]) -> list[str]:
    lines = [
        f"{'align':>5} {'graphs':>6} {'arena/bound':>24} {'arena/naive':>11} {'rlx/bound':>24} "
        f"{'auto<rlx':>8} {'auto=rlx':>8} {'auto>rlx':>8}  strategies picked"
    ]
    for alignment in alignments:
        ratios, naive_ratios, rlx_ratios = [], [], []
        versus: Counter[str] = Counter()
        picked: Counter[str] = Counter()
        for text in texts:
            f = compare(text, alignment=alignment)
            ratios.append(_ratio(f["arena"], f["bound"]))
            naive_ratios.append(_ratio(f["arena"], f["naive"]))
            rlx_ratios.append(_ratio(f["rlx"], f["bound"]))
            versus["<" if f["arena"] < f["rlx"] else "=" if f["arena"] == f["rlx"] else ">"] += 1
            picked[str(f["strategy"])] += 1
        picks = ", ".join(f"{name} {n}" for name, n in picked.most_common())
        lines.append(
            f"{alignment:>5} {len(texts):>6} {_summary(ratios):>24} {_mean(naive_ratios):>11.3f} "
            f"{_summary(rlx_ratios):>24} {versus['<']:>8} {versus['=']:>8} {versus['>']:>8}  {picks}"
        )
    return lines


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _summary(values: list[float]) -> str:
    """`geomean / max / share at 1.0`."""
    if not values:
        return "-"
    geomean = math.exp(sum(math.log(v) for v in values) / len(values))
    exact = sum(1 for v in values if v == 1.0) / len(values)
    return f"{geomean:.3f} / {max(values):.3f} / {exact:.0%}"


# The planner's share of an rlx-opt run ---------------------------------------------------------


def rlx_opt_share(layers: int, repeat: int) -> list[str]:
    rlx_opt = Path(sys.executable).parent / "rlx-opt"
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / f"llama_{layers}.mlir"
        source.write_text(str(build_llama(layers)))
        output = Path(work) / "planned.mlir"
        command = [str(rlx_opt), str(source), "-p", "rlx-plan-memory", "--time-passes", "-o", str(output)]
        best_total, best_pass = math.inf, math.inf
        for _ in range(repeat):
            start = _now()
            done = subprocess.run(command, check=True, capture_output=True, text=True)
            total = _now() - start
            seconds = float(re.search(r"took ([0-9.e-]+) seconds", done.stdout).group(1))
            best_total, best_pass = min(best_total, total), min(best_pass, seconds)
    return [
        f"# `rlx-opt llama_{layers}.mlir -p rlx-plan-memory --time-passes -o FILE`, best of {repeat}",
        f"rlx-opt total {best_total:.3f} s, rlx-plan-memory {best_pass:.3f} s: "
        f"{best_pass / best_total:.1%} of the run",
    ]


def _now() -> float:
    return time.perf_counter()


def _calls(action) -> int:
    """Python function calls made by `action()`: a measure of work that load does not skew."""
    profile = cProfile.Profile()
    profile.enable()
    action()
    profile.disable()
    return pstats.Stats(profile).total_calls


def scaling_table(layer_counts: list[int], repeat: int) -> list[str]:
    """Per op: microseconds of planning, and of verifying before and after planning (the
    plan's proof is the difference), best of `repeat` with all sizes interleaved; and the
    Python calls each makes, which a loaded machine cannot distort."""
    texts = {n: str(build_llama(n)) for n in layer_counts}
    ops = {n: sum(1 for _ in parse_module(t).walk()) for n, t in texts.items()}
    best: dict[tuple[int, str], float] = {}
    calls: dict[tuple[int, str], int] = {}
    for round_ in range(repeat + 1):
        for n, text in texts.items():
            mir, planned = parse_module(text), parse_module(text)
            timed = {
                "verify MIR": lambda: verify_located(mir),
                "plan": lambda: PlanMemoryPass().apply(Context(), planned),
                "verify LIR": lambda: verify_located(planned),  # after "plan": it verifies the plan
            }
            for what, action in timed.items():
                if round_ == repeat:
                    calls[(n, what)] = _calls(action)
                    continue
                start = _now()
                action()
                best[(n, what)] = min(best.get((n, what), math.inf), _now() - start)
    first, last = layer_counts[0], layer_counts[-1]
    lines = [
        f"# in-process, best of {repeat}; ratio = per-op cost at {last} layers / at {first}",
        f"{'phase':<11} {'':>9} " + " ".join(f"{f'{n} layers':>10}" for n in layer_counts) + f" {'ratio':>6}",
    ]
    for what in ("plan", "verify MIR", "verify LIR"):
        for unit, table, scale in (("us/op", best, 1e6), ("calls/op", calls, 1)):
            per_op = [table[(n, what)] / ops[n] * scale for n in layer_counts]
            cells = " ".join(f"{v:>10.1f}" for v in per_op)
            lines.append(f"{what:<11} {unit:>9} {cells} {per_op[-1] / per_op[0]:>6.2f}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-layers", type=int, default=32)
    parser.add_argument("--random", type=int, default=300, help="number of random graphs (0: none)")
    parser.add_argument("--max-ops", type=int, default=14, help="recipe steps per random graph")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the timed rlx-opt command")
    parser.add_argument("--no-timing", action="store_true", help="skip the rlx-opt timing")
    args = parser.parse_args(argv)
    layer_counts = [n for n in (1, 2, 4, 8, 16, 32, 64) if n <= args.max_layers]
    dims = ", ".join(f"{k}={v}" for k, v in DEFAULT_DIMS.items())
    print(f"# rlx-plan-memory plan quality; xDSL {xdsl.__version__}; Python {platform.python_version()}; "
          f"{os.cpu_count()} CPUs")
    print("# arena = strategy=auto, alignment 64 unless said; rlx = strategy=rlx (RLX 0.2.2's planner)")
    print(f"\n# LLaMA build_llama(N, {dims}), f32; parameters in the arena or outside it")
    print("\n".join(llama_table(layer_counts)))
    if args.random:
        print(f"\n# {args.random} random graphs (testing.graphgen, max_ops={args.max_ops}); "
              "ratios as geomean / max / share of graphs exactly at the bound")
        print("\n".join(random_table(random_graphs(args.random, args.max_ops), [64, 4])))
    if not args.no_timing:
        print()
        print("\n".join(scaling_table([n for n in layer_counts if n >= 2] or layer_counts, 2 * args.repeat + 1)))
        print()
        print("\n".join(rlx_opt_share(layer_counts[-1], args.repeat)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
