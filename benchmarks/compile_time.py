"""Compile-time benchmark: how long rlx-xdsl takes on N-layer LLaMA graphs.

    python benchmarks/compile_time.py [--max-layers 32] [--repeat 5] [--no-stock]
                                      [--process-layers 4,32,128] [--process-repeat 5]
                                      [--baseline DIR]

For N = 1, 2, 4, ... up to --max-layers it builds `build_llama(N)`, prints it
to a temporary .mlir file, and then times, in this one process:

* parse  - `rlx_xdsl.context.parse_module` of the file's text;
* verify - `module.verify()`;
* print  - printing the module (custom syntax) to a string;
* every registered pass (`rlx_xdsl.transforms.get_all_passes()`), built with its
  default options (or those in `PASS_OPTIONS`) and applied to a freshly parsed
  module (the parse is not timed). A pass that needs options it is not given is
  listed with the reason instead. A pass that only rewrites ops the LLaMA graph
  lacks runs on the graph `PASS_WORKLOADS` names for it, at the same N (its
  rows show that graph's op count; it is not part of `ours`).

Each time is the best (minimum) of --repeat runs: on a shared machine the
minimum is the least noisy estimate. `ours` = parse + verify + every pass +
print. It is compared with stock xDSL: the wall time of a subprocess
`xdsl-opt FILE -o /dev/null` (parse, verify, print; it sees the mir dialect
through rlx-xdsl's `xdsl.universe` entry point), which includes xdsl-opt's
start-up, so the start-up on an empty file is reported too and the second
ratio subtracts it. The linearity table divides the time per op at the largest
N by the time per op at the smallest N: about 1 means linear scaling.

Then, unless --no-process, it compares whole processes (start-up included) in
CPU time (user + sys of the child, `resource.getrusage(RUSAGE_CHILDREN)`): for
each N of --process-layers and each pipeline of `PIPELINES`, `rlx-opt FILE -p
PIPELINE -o OUT` and stock `xdsl-opt FILE -o OUT` (parse, verify, print) run back
to back --process-repeat times; the ratio is the median of ours over the median
of stock. rlx_xdsl's bytecode is written first (`compile_bytecode`), as an installed
package has it. Run in the same process, a breakdown of the inference pipeline the way
rlx-opt runs it (parse, verify, each pass, the verify after it, print) gives each
phase's ops/s.

A nesting-depth table times each pipeline of `NESTED_PASSES` (the passes over
region ops) on `nested_if(D)`, `mir.if`s nested D deep, for D = 8, 16, ... up to
--max-depth, with the time per level at the largest D over that at the smallest
(about 1 means linear in depth).

Nothing here asserts on timings; the numbers are for reading (see README.md).
"""

from __future__ import annotations

import argparse
import compileall
import dataclasses
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from io import StringIO
from pathlib import Path

import xdsl
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.printer import Printer

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.testing.llama import DEFAULT_DIMS, build_llama
from rlx_xdsl.testing.llama_hir import build_llama_hir
from rlx_xdsl.testing.nested import NESTED_PASSES, nested_if
from rlx_xdsl.testing.training import build_llama_loss, build_llama_training
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline

CONFIG = dict(DEFAULT_DIMS)
"""`build_llama` dimensions (its defaults); only the number of layers varies."""

_HEAD_DIM = CONFIG["dim"] // CONFIG["n_heads"]
def _calibration_file(entries: dict) -> str:
    """A calibration file for `rlx-insert-qdq`, written once per run."""
    import json
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump(entries, f)
    return f.name


PASS_OPTIONS: dict[str, dict] = {
    # The graph is fully static, so rlx-specialize has nothing to bind by default
    # and would time a no-op. Binding the inputs to their own shapes makes it
    # re-infer every result type, which is the work a real specialisation does.
    "rlx-specialize": {
        "shapes": (
            f"x={CONFIG['batch']}x{CONFIG['seq']}x{CONFIG['dim']}",
            f"cos={CONFIG['seq']}x{_HEAD_DIM // 2}",
            f"sin={CONFIG['seq']}x{_HEAD_DIM // 2}",
        )
    },
    # always-f32 (the default) leaves the graph alone; the conservative policy inserts
    # the most casts (every norm is a precision boundary).
    "rlx-amp": {"policy": "auto-mixed-conservative"},
    # The default caps (32 steps) keep every region of the graph; one step unfuses them all.
    "rlx-clip-elementwise-regions": {"max_steps": 1},
    # The loss workload's function (build_llama_loss keeps the name @llama).
    "rlx-grad": {"func": "llama"},
    # Forward mode along every weight (rlx-hvp: over the loss's gradient), and the
    # decoder mapped over 8 input sequences.
    "rlx-jvp": {"func": "llama"},
    "rlx-hvp": {"func": "llama"},
    # One AdamW step over every weight (the gradient as rlx-grad builds it, then the update).
    "rlx-train-step": {"func": "llama"},
    "rlx-vmap": {"func": "llama", "batched": ("x",), "size": 8},
    # Q/DQ after the input; weight-only int8 quantisation of every projection.
    "rlx-insert-qdq": {"calibration": _calibration_file({"x": {"scales": [0.05]}})},
    "rlx-quantize-weights": {"scheme": "int8_block", "block_size": 16},
}
"""Options for passes that would otherwise do nothing (or cannot run) on the graph."""

def build_llama_with_regions(n_layers: int, **dims) -> ModuleOp:
    """`build_llama(n_layers)` with its elementwise chains marked as regions."""
    from rlx_xdsl.transforms.fusion.elementwise_regions import (
        MarkElementwiseRegionsPass,
    )

    module = build_llama(n_layers, **dims)
    MarkElementwiseRegionsPass().apply(make_context(), module)
    return module


def build_vision(n_layers: int, **dims) -> ModuleOp:
    """`vision_blocks(n_layers)`: U-Net decoder blocks and batch pre-processings (their resizes,
    narrow -> elementwise -> concat slices) for RLX's FK region passes."""
    from rlx_xdsl.testing.vision_graphs import vision_blocks

    return vision_blocks(n_layers)


def _vision_after(*names: str) -> Callable[..., ModuleOp]:
    """`build_vision` after the fusion passes `names`: the IR a later FK pass sees in the pipeline."""

    def build(n_layers: int, **dims) -> ModuleOp:
        from rlx_xdsl.transforms import FUSION_PASSES

        module = build_vision(n_layers)
        for name in names:
            FUSION_PASSES[name]()().apply(make_context(), module)
        return module

    build.__name__ = "build_vision_marked" if len(names) == 2 else "build_vision_fused"
    return build


_VISION_MARKED = ("rlx-mark-elementwise-regions", "rlx-mark-batch-slice-regions")
_VISION_FUSED = (
    *_VISION_MARKED, "rlx-mark-transform-regions", "rlx-fuse-region-prologue", "rlx-fuse-batch-preprocess"
)


PASS_WORKLOADS: dict[str, Callable[..., ModuleOp]] = {
    # Loss heads and backward kernels: the LLaMA graph with an SCE head and the
    # backward kernels of its gradient (rms_norm, rope, attention, silu).
    "rlx-lower-softmax-cross-entropy": build_llama_training,
    "rlx-decompose-backward": build_llama_training,
    # HIR blocks: the same decoder written as one hir.llama_decoder_block per layer.
    "rlx-lower-hir": build_llama_hir,
    # Elementwise regions to take apart: the decoder after rlx-mark-elementwise-regions.
    "rlx-unfuse-elementwise-regions": build_llama_with_regions,
    "rlx-clip-elementwise-regions": build_llama_with_regions,
    # Autodiff: the decoder with a mean softmax-cross-entropy loss (rlx-grad differentiates
    # it with respect to every weight); rlx-prepare-ad decomposes the training graph's kernels.
    "rlx-grad": build_llama_loss,
    "rlx-jvp": build_llama_loss,
    "rlx-hvp": build_llama_loss,
    "rlx-train-step": build_llama_loss,
    "rlx-prepare-ad": build_llama_training,
    # RLX's FK region passes: vision graphs (LLaMA has no resizes or batch slices), each pass
    # on the IR the passes before it in rlx-fusion-pipeline make.
    "rlx-mark-batch-slice-regions": build_vision,
    "rlx-mark-transform-regions": build_vision,
    "rlx-fuse-region-prologue": _vision_after(*_VISION_MARKED),
    "rlx-fuse-batch-preprocess": _vision_after(*_VISION_MARKED),
    "rlx-decompose-fusion-regions": _vision_after(*_VISION_FUSED),
}
"""Graphs for passes that only rewrite ops the LLaMA graph does not contain."""

PRODUCED_OPS: dict[str, Callable[..., ModuleOp]] = {
    # rlx-lower-hir's work is the MIR it makes: build_llama(N), op for op.
    "rlx-lower-hir": build_llama,
}
"""Workload passes whose rows count the ops of the graph they produce, not of their input."""

TOTAL = "ours (total)"

_SHAPES = ",".join(PASS_OPTIONS["rlx-specialize"]["shapes"])
PIPELINES: dict[str, tuple[str, ...]] = {
    # The reference pipeline: bind the inputs, then remove dead code.
    "specialize-dce": (f"rlx-specialize{{shapes={_SHAPES}}}", "rlx-dce"),
    # The longest inference compile of a MIR graph: every inference pass, in the order
    # a compiler runs them (see README.md); passes not registered yet are left out.
    "inference": (
        f"rlx-specialize{{shapes={_SHAPES}}}",
        "rlx-canonicalize",
        "rlx-dce",
        "rlx-fusion-pipeline{target=cpu}",
        "rlx-amp{policy=auto-mixed}",
        "rlx-fold-casts",
        "rlx-plan-memory",
    ),
}
"""The `rlx-opt -p` pipelines compared, whole process, with stock `xdsl-opt`."""

INFERENCE = "inference"
"""The pipeline broken down phase by phase."""


@dataclasses.dataclass
class Measurement:
    """The timings of one graph size: seconds per phase or pass name."""

    layers: int
    ops: int
    seconds: dict[str, float]
    stock: float | None = None
    workloads: dict[str, tuple[int, float]] = dataclasses.field(default_factory=dict)
    """Passes timed on their own `PASS_WORKLOADS` graph: (its op count, seconds)."""

    @property
    def ours(self) -> float:
        return sum(self.seconds.values())

    @property
    def phases(self) -> dict[str, float]:
        """Seconds per phase and pass, the total, then the passes on their own workloads."""
        return {**self.seconds, TOTAL: self.ours, **{n: t for n, (_, t) in self.workloads.items()}}

    def ops_of(self, phase: str) -> int:
        """The op count of the graph `phase` ran on."""
        return self.workloads[phase][0] if phase in self.workloads else self.ops


def best_time(action: Callable[[], object], repeat: int, setup: Callable[[], object] | None = None) -> float:
    """Minimum wall time of `action(setup())` (or `action()`) over `repeat` runs, setup excluded."""
    times = []
    for _ in range(repeat):
        arg = setup() if setup is not None else None
        start = time.perf_counter()
        action(arg) if setup is not None else action()
        times.append(time.perf_counter() - start)
    return min(times)


def count_ops(module: ModuleOp) -> int:
    """All operations, the module and functions included."""
    return sum(1 for _ in module.walk())


def print_module(module: ModuleOp) -> str:
    out = StringIO()
    Printer(stream=out).print_op(module)
    return out.getvalue()


# Passes ----------------------------------------------------------------------


def required_options(pass_class: type[ModulePass]) -> list[str]:
    """The pass's dataclass fields that have no default (it cannot run without them)."""
    return [
        f.name
        for f in dataclasses.fields(pass_class)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]


def instantiate_passes() -> tuple[dict[str, ModulePass], dict[str, str]]:
    """Every registered pass (default options, or `PASS_OPTIONS`), and the reasons for those skipped."""
    passes: dict[str, ModulePass] = {}
    skipped: dict[str, str] = {}
    for name, loader in sorted(get_all_passes().items()):
        try:
            pass_class = loader()
        except ImportError as e:
            skipped[name] = f"not importable ({e})"
            continue
        options = PASS_OPTIONS.get(name, {})
        missing = [o for o in required_options(pass_class) if o not in options]
        if missing:
            skipped[name] = f"needs option(s) {', '.join(missing)}"
            continue
        passes[name] = pass_class(**options)
    return passes, skipped


def time_pass(pass_: ModulePass, text: str, path: str, repeat: int) -> float:
    ctx = make_context()
    return best_time(lambda module: pass_.apply(ctx, module), repeat, setup=lambda: parse_module(text, path))


# Stock xdsl-opt ----------------------------------------------------------------


def xdsl_opt() -> str | None:
    candidate = Path(sys.executable).parent / "xdsl-opt"
    return str(candidate) if candidate.exists() else shutil.which("xdsl-opt")


def time_stock(path: str, repeat: int) -> float:
    """Best wall time of `xdsl-opt FILE -o /dev/null` (start-up included)."""
    command = [xdsl_opt(), path, "-o", os.devnull]
    return best_time(lambda: subprocess.run(command, check=True, capture_output=True), repeat)


# Whole processes: rlx-opt pipelines against stock xdsl-opt ---------------------


def pipeline_text(name: str) -> tuple[str, list[str]]:
    """The `-p` text of pipeline `name` from the registered passes, and the passes left out."""
    registered = get_all_passes()
    kept, missing = [], []
    for spec in PIPELINES[name]:
        (kept if spec.split("{")[0] in registered else missing).append(spec)
    return ",".join(kept), missing


def rlx_opt() -> str | None:
    candidate = Path(sys.executable).parent / "rlx-opt"
    return str(candidate) if candidate.exists() else shutil.which("rlx-opt")


def child_cpu(command: list[str], env: dict[str, str] | None = None, cwd: Path | None = None) -> float:
    """CPU seconds (user + sys) `command` took as a child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    subprocess.run(command, check=True, capture_output=True, env=env, cwd=cwd)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


@dataclasses.dataclass
class ProcessRatio:
    """Paired whole-process CPU times of one pipeline on one graph."""

    layers: int
    ops: int
    pipeline: str
    ours: list[float]
    stock: list[float]
    baseline: list[float] = dataclasses.field(default_factory=list)
    """The --baseline tree's rlx-opt, paired the same way (empty without --baseline)."""
    baseline_stock: list[float] = dataclasses.field(default_factory=list)
    """Stock xdsl-opt loading the --baseline tree's dialects."""

    @property
    def ratio(self) -> float:
        return statistics.median(self.ours) / statistics.median(self.stock)

    @property
    def baseline_ratio(self) -> float | None:
        if not self.baseline:
            return None
        return statistics.median(self.baseline) / statistics.median(self.baseline_stock)


def compile_bytecode() -> None:
    """Write rlx_xdsl's bytecode first, as an installed package has it: with
    PYTHONDONTWRITEBYTECODE set (or a source file just edited), every rlx-opt process
    would compile those modules again, which stock xdsl-opt (installed) never does."""
    import rlx_xdsl

    compileall.compile_dir(str(Path(rlx_xdsl.__file__).parent), quiet=1)


def compare_processes(
    path: Path, layers: int, ops: int, repeat: int, baseline: Path | None = None
) -> list[ProcessRatio]:
    """Each pipeline's `rlx-opt` run paired with a stock `xdsl-opt` run, `repeat` times.

    With `baseline` (another rlx-xdsl source tree, e.g. `git archive main`), each pair is
    followed by that tree's rlx-opt (`python -m rlx_xdsl.tools.rlx_opt`, run in the tree:
    `-m` puts the working directory first on the path) and stock xdsl-opt, both importing
    rlx_xdsl from it (PYTHONPATH): before and after in one run.
    """
    out = str(path.with_suffix(".out.mlir"))
    stock_command = [xdsl_opt(), str(path), "-o", out]
    baseline = baseline.resolve() if baseline is not None else None
    base_env = dict(os.environ, PYTHONPATH=str(baseline)) if baseline is not None else None
    results = []
    for name in PIPELINES:
        pipeline = pipeline_text(name)[0]
        command = [rlx_opt(), str(path), "-p", pipeline, "-o", out]
        base_command = [sys.executable, "-m", "rlx_xdsl.tools.rlx_opt", str(path), "-p", pipeline, "-o", out]
        result = ProcessRatio(layers, ops, name, [], [])
        for _ in range(repeat):
            result.ours.append(child_cpu(command))
            result.stock.append(child_cpu(stock_command))
            if base_env is not None:
                result.baseline.append(child_cpu(base_command, base_env, baseline))
                result.baseline_stock.append(child_cpu(stock_command, base_env, baseline))
        results.append(result)
    return results


def pipeline_phases(path: Path) -> dict[str, float]:
    """CPU seconds of each phase of `rlx-opt FILE -p <inference>`, run as rlx-opt runs it:
    parse, verify, each pass and the verify after it (when the pass may have changed the
    IR), print, at rlx-opt's garbage-collector pace."""
    from rlx_xdsl.ir.diagnostics import verify_located
    from rlx_xdsl.ir.source import parse_source
    from rlx_xdsl.tools.collector import tool_run_pace
    from rlx_xdsl.tools.rlx_opt import RlxOptMain
    from rlx_xdsl.transforms.pipeline import run_pass

    main = RlxOptMain(args=[str(path), "-p", pipeline_text(INFERENCE)[0]])
    text = path.read_text()
    phases: dict[str, float] = {}

    def timed(phase: str, action: Callable[[], object]) -> object:
        start = time.process_time()
        result = action()
        phases[phase] = phases.get(phase, 0.0) + time.process_time() - start
        return result

    with tool_run_pace():  # rlx-opt's garbage-collector settings
        module, _ = timed("parse", lambda: parse_source(main.ctx, text, str(path), verify=False))
        timed("verify", lambda: verify_located(module))
        for pass_ in main.pipeline_spec.passes:
            if timed(pass_.name, lambda: run_pass(pass_, main.ctx, module, module)):
                timed("verify after passes", lambda: verify_located(module))
        timed("print", lambda: main.output_resulting_program(module))
    return phases


def process_tables(ratios: list[ProcessRatio], phases: dict[int, tuple[int, dict[str, float]]], repeat: int) -> list[str]:
    lines = [
        f"# whole process, CPU time (user+sys), median of {repeat} paired runs: "
        "`rlx-opt FILE -p PIPELINE -o OUT` / `xdsl-opt FILE -o OUT`",
    ]
    for name in PIPELINES:
        text, missing = pipeline_text(name)
        lines.append(f"# pipeline {name}: {text}")
        lines += [f"#   (not registered, left out: {spec})" for spec in missing]
    with_baseline = any(r.baseline for r in ratios)
    columns = f"{'layers':>6} {'ops':>6}  {'pipeline':<16} {'rlx-opt s':>10} {'xdsl-opt s':>11} {'ratio':>7}"
    if with_baseline:
        lines.append("# baseline = the --baseline tree's rlx-opt and stock xdsl-opt loading its dialects")
        columns += f" {'baseline s':>11} {'its xdsl-opt s':>15} {'baseline ratio':>15}"
    lines.append(columns)
    for r in ratios:
        line = (
            f"{r.layers:>6} {r.ops:>6}  {r.pipeline:<16} {statistics.median(r.ours):10.3f} "
            f"{statistics.median(r.stock):11.3f} {r.ratio:7.2f}"
        )
        if r.baseline:
            line += (
                f" {statistics.median(r.baseline):11.3f} {statistics.median(r.baseline_stock):15.3f} "
                f"{r.baseline_ratio:15.2f}"
            )
        lines.append(line)
    lines += ["", f"# in-process CPU time of each phase of the {INFERENCE} pipeline, as rlx-opt runs it (one run)"]
    lines.append(f"{'layers':>6} {'ops':>6}  {'phase':<32} {'seconds':>9} {'ops/s':>10} {'share':>6}")
    for layers, (ops, times) in phases.items():
        total = sum(times.values())
        for phase, seconds in [*times.items(), ("total", total)]:
            lines.append(
                f"{layers:>6} {ops:>6}  {phase:<32} {seconds:9.4f} {_rate(ops, seconds)} {seconds / total:6.1%}"
            )
    return lines


# The benchmark -----------------------------------------------------------------


def measure(
    layers: int, passes: dict[str, ModulePass], repeat: int, workdir: Path, stock: bool
) -> Measurement:
    """Time every phase and pass on the `layers`-layer graph."""
    path = workdir / f"llama_{layers}.mlir"
    path.write_text(print_module(build_llama(layers, **CONFIG)))
    text, name = path.read_text(), str(path)
    module = parse_module(text, name)
    seconds = {
        "parse": best_time(lambda: parse_module(text, name), repeat),
        "verify": best_time(module.verify, repeat),
        "print": best_time(lambda: print_module(module), repeat),
    }
    workloads: dict[str, tuple[int, float]] = {}
    for pass_name, pass_ in passes.items():
        build = PASS_WORKLOADS.get(pass_name)
        graph_text, graph_name, ops = text, name, None
        if build is not None:
            graph = build(layers, **CONFIG)
            graph_path = workdir / f"{build.__name__}_{layers}.mlir"
            graph_path.write_text(print_module(graph))
            graph_text, graph_name, ops = graph_path.read_text(), str(graph_path), count_ops(graph)
            if pass_name in PRODUCED_OPS:
                ops = count_ops(PRODUCED_OPS[pass_name](layers, **CONFIG))
        try:
            elapsed = time_pass(pass_, graph_text, graph_name, repeat)
        except Exception as e:
            print(f"{pass_name} failed on {layers} layers: {type(e).__name__}: {e}", file=sys.stderr)
            elapsed = float("nan")
        if ops is None:
            seconds[pass_name] = elapsed
        else:
            workloads[pass_name] = (ops, elapsed)
    stock_time = time_stock(name, repeat) if stock else None
    return Measurement(layers, count_ops(module), seconds, stock_time, workloads)


def _rate(ops: int, seconds: float) -> str:
    return f"{ops / seconds:10.0f}" if seconds > 0 else f"{'-':>10}"


def header(passes: dict[str, ModulePass], skipped: dict[str, str], repeat: int, stock: bool) -> list[str]:
    """What was measured, on what, and how: the `#` lines above the tables."""
    config = ", ".join(f"{k}={v}" for k, v in CONFIG.items())
    lines = [
        f"# rlx-xdsl compile time: build_llama(N, {config})",
        f"# best of {repeat} runs; xDSL {xdsl.__version__}; Python {platform.python_version()}; "
        f"{os.cpu_count()} CPUs; {platform.machine()}",
        "# ops   = every operation of the module (builtin.module, func.func and func.return included)",
        "# ours  = in-process parse + verify + every pass (each on a freshly parsed module) + print",
        "# stock = subprocess `xdsl-opt FILE -o /dev/null` wall time (parse, verify, print; "
        "includes start-up)" if stock else "# stock = not measured",
    ]
    lines += [f"# pass {n} runs as: {p.pipeline_pass_spec()}" for n, p in passes.items() if n in PASS_OPTIONS]
    lines += [
        f"# pass {n} runs on {PASS_WORKLOADS[n].__name__}(N) (its own op count; not in ours)"
        for n in passes
        if n in PASS_WORKLOADS and n not in PRODUCED_OPS
    ]
    lines += [
        f"# pass {n} runs on {PASS_WORKLOADS[n].__name__}(N); ops = those of the {PRODUCED_OPS[n].__name__}(N) "
        "it produces (not in ours)"
        for n in passes
        if n in PRODUCED_OPS
    ]
    lines += [f"# skipped pass {name}: {reason}" for name, reason in skipped.items()]
    return lines


def phase_table(results: list[Measurement]) -> list[str]:
    lines = [f"{'layers':>6} {'ops':>6}  {'phase':<32} {'seconds':>9} {'ops/s':>10}"]
    for r in results:
        for phase, seconds in r.phases.items():
            ops = r.ops_of(phase)
            lines.append(f"{r.layers:>6} {ops:>6}  {phase:<32} {seconds:9.4f} {_rate(ops, seconds)}")
    return lines


def stock_table(results: list[Measurement], startup: float) -> list[str]:
    lines = [
        f"# xdsl-opt start-up on an empty module: {startup:.3f} s",
        f"{'layers':>6} {'ops':>6} {'ours s':>9} {'stock s':>9} {'ours/stock':>11} "
        f"{'ours/(stock-startup)':>21}",
    ]
    for r in results:
        net = r.stock - startup
        net_ratio = f"{r.ours / net:21.2f}" if net > 0 else f"{'-':>21}"
        lines.append(
            f"{r.layers:>6} {r.ops:>6} {r.ours:9.4f} {r.stock:9.4f} {r.ours / r.stock:11.2f} {net_ratio}"
        )
    return lines


def linearity_table(first: Measurement, last: Measurement) -> list[str]:
    """Time per op at the largest size over time per op at the smallest, per phase."""
    lines = [
        f"# linearity: time per op at {last.layers} layers / time per op at {first.layers} layers "
        "(1.0 = linear)",
        f"{'phase':<32} {'us/op @' + str(first.layers):>12} {'us/op @' + str(last.layers):>12} {'ratio':>7}",
    ]
    for phase in first.phases:
        small = first.phases[phase] / first.ops_of(phase) * 1e6
        large = last.phases[phase] / last.ops_of(phase) * 1e6
        ratio = f"{large / small:7.2f}" if small > 0 else f"{'-':>7}"
        lines.append(f"{phase:<32} {small:12.2f} {large:12.2f} {ratio}")
    return lines


def report(results, passes, skipped, startup: float | None, repeat: int) -> list[str]:
    """The whole output, as lines of text."""
    lines = [*header(passes, skipped, repeat, startup is not None), "", *phase_table(results)]
    if startup is not None:
        lines += ["", *stock_table(results, startup)]
    return [*lines, "", *linearity_table(results[0], results[-1])]


def nesting_table(max_depth: int, repeat: int) -> list[str]:
    """Each `NESTED_PASSES` pipeline timed on `nested_if(D)`, D doubling from 8, and its linearity."""
    depths = [d for d in (8 * 2**k for k in range(max_depth.bit_length())) if d <= max_depth] or [max_depth]
    lines = [
        f"# nesting depth: each pipeline on nested_if(D) (mir.ifs nested D deep); ratio = time per level "
        f"at D={depths[-1]} / at D={depths[0]} (1.0 = linear)",
        f"{'pipeline':<40} " + " ".join(f"{'s @' + str(d):>10}" for d in depths) + f" {'ratio':>7}",
    ]
    ctx = make_context()
    for spec in NESTED_PASSES:
        pipeline = parse_pipeline(spec, get_all_passes()).passes

        def run(module: ModuleOp) -> None:
            for pass_ in pipeline:
                pass_.apply(ctx, module)

        times = [best_time(run, repeat, setup=lambda d=d: parse_module(nested_if(d))) for d in depths]
        small, large = times[0] / depths[0], times[-1] / depths[-1]
        ratio = f"{large / small:7.2f}" if small > 0 else f"{'-':>7}"
        lines.append(f"{spec:<40} " + " ".join(f"{t:10.4f}" for t in times) + f" {ratio}")
    return lines


def layer_counts(max_layers: int) -> list[int]:
    counts, n = [], 1
    while n <= max_layers:
        counts.append(n)
        n *= 2
    return counts


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Time parse, verify, print and every pass on N-layer LLaMA graphs."
    )
    parser.add_argument("--max-layers", type=int, default=32, help="largest N (N doubles from 1; default 32)")
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per measurement; the best is reported (default 5)"
    )
    parser.add_argument("--no-stock", action="store_true", help="skip every comparison with xdsl-opt (the whole-process one too)")
    parser.add_argument(
        "--process-layers",
        default="4,32,128",
        help="graph sizes of the whole-process comparison (comma-separated; default 4,32,128)",
    )
    parser.add_argument(
        "--process-repeat", type=int, default=5, help="paired runs per whole-process ratio (median; default 5)"
    )
    parser.add_argument("--no-process", action="store_true", help="skip the whole-process comparison")
    parser.add_argument(
        "--max-depth", type=int, default=64, help="largest nesting depth D of the nesting table (D doubles from 8; default 64)"
    )
    parser.add_argument(
        "--baseline",
        type=Path,
        help="another rlx-xdsl source tree (e.g. `git archive main` unpacked) whose rlx-opt and "
        "dialects the whole-process comparison also runs, paired the same way",
    )
    args = parser.parse_args(argv)
    if args.max_layers < 1 or args.repeat < 1 or args.process_repeat < 1 or args.max_depth < 1:
        parser.error("--max-layers, --max-depth, --repeat and --process-repeat must be at least 1")
    process_layers = [int(n) for n in args.process_layers.split(",") if n]
    stock = not args.no_stock and xdsl_opt() is not None
    passes, skipped = instantiate_passes()
    with tempfile.TemporaryDirectory(prefix="rlx-bench-") as tmp:
        workdir = Path(tmp)
        startup = None
        if stock:
            empty = workdir / "empty.mlir"
            empty.write_text("builtin.module {}\n")
            startup = time_stock(str(empty), args.repeat)
        results = []
        for n in layer_counts(args.max_layers):
            print(f"measuring {n} layer(s)...", file=sys.stderr)
            results.append(measure(n, passes, args.repeat, workdir, stock))
        lines = report(results, passes, skipped, startup, args.repeat)
        print("measuring nesting depth...", file=sys.stderr)
        lines += ["", *nesting_table(args.max_depth, args.repeat)]
        if stock and not args.no_process and rlx_opt() is not None:
            ratios, phases = [], {}
            compile_bytecode()
            if args.baseline is not None:
                compileall.compile_dir(str(args.baseline / "rlx_xdsl"), quiet=1)
            for n in process_layers:
                print(f"comparing processes on {n} layer(s)...", file=sys.stderr)
                module = build_llama(n, **CONFIG)
                path = workdir / f"process_llama_{n}.mlir"
                path.write_text(print_module(module))
                ratios += compare_processes(path, n, count_ops(module), args.process_repeat, args.baseline)
                phases[n] = (count_ops(module), pipeline_phases(path))
            lines += ["", *process_tables(ratios, phases, args.process_repeat)]
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
