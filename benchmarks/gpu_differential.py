"""The backends' differential test on a GPU: the interpreter against IREE CUDA and XLA GPU.

    RLX_IREE_CACHE_DIR=DIR python benchmarks/gpu_differential.py --compile-only --cuda-target sm_90  # no GPU needed
    RLX_IREE_CACHE_DIR=DIR python benchmarks/gpu_differential.py --save outputs.npz             # on the GPU machine
    python benchmarks/gpu_differential.py --replay outputs.npz                                  # anywhere: classify again

The cases, inputs and classification are tests/backends/test_differential.py's
(`rlx_xdsl.testing.differential_cases`, `differential.differential_run`): every lowerable
op case with edge values (±0, ±inf, NaN, subnormals, the largest finite values, integer
limits, ties), exact ops compared bit for bit, transcendental ones within `ULP_BOUNDS`;
the Gaussian-splatting cases run on XLA only. A difference is "documented" when it is an
entry of `differential.GPU_DEVIATIONS` (backends "iree-cuda" and "xla-gpu") or of
`differential.DEVIATIONS` for the same CPU backend (`GPU_BACKENDS`), held exactly.
Then tests/backends/test_transcendental_ranges.py's sweep: the transcendental unary ops in
f32 and f64 over their whole range, within their ulp bounds (`differential.ulp_bound`).

A GPU machine needs no IREE compiler: `--compile-only` on a machine with one compiles
every CUDA module into `RLX_IREE_CACHE_DIR` (and writes there which cases the CUDA
compiler refuses: a module it rejects is compiled case by case, unless leaving out the
cases an earlier run found is enough), and the GPU run reads them from the same directory.
`--save` writes every backend output (and error) to an .npz file; `--replay` classifies
such a file again on any machine (the interpreter runs again, on this machine's CPU).

Prints the counts per backend and status, then every failure (an undocumented
disagreement, a value where the interpreter errors, an internal error). Exit status 0
when there is none, 1 otherwise, 2 without a GPU.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from pathlib import Path

import ml_dtypes
import numpy as np
from gpu_check import gpu_target

from rlx_xdsl.backends import iree
from rlx_xdsl.testing import op_cases
from rlx_xdsl.testing.differential import FAILURES, GPU_DEVIATIONS, differential_run
from rlx_xdsl.testing.differential_cases import (
    edge_cases,
    group_cases,
    inputs_for,
    splat_cases,
    sweep_input,
    sweep_module,
    sweep_names,
    sweep_run,
    xla_runner,
)

REFUSALS = "cuda-refusals.json"
"""The file in `RLX_IREE_CACHE_DIR` naming the cases the CUDA compiler refused, with its error."""


def case_modules() -> dict[str, tuple[list, object]]:
    """`{group: (cases, module)}`: the edge-value cases, the other lowerable groups, and
    the splatting cases (XLA only)."""
    groups = {"edge": edge_cases(), "groups": group_cases(), "splat": splat_cases()}
    return {name: (cases, op_cases.cases_module(cases)) for name, cases in groups.items()}


def without(module, names: set[str]):
    """A copy of `module` without the functions `names`."""
    kept = module.clone()
    for f in [f for f in kept.ops if getattr(f, "sym_name", None) is not None and f.sym_name.data in names]:
        kept.body.block.erase_op(f)
    return kept


def compile_only(device: iree.Device, modules) -> int:
    """Compile each lowerable group for CUDA into the cache; a module the compiler rejects
    is compiled function by function to find the refused ones (written to `REFUSALS`)."""
    cache = os.environ.get("RLX_IREE_CACHE_DIR")
    if not cache:
        print("--compile-only needs RLX_IREE_CACHE_DIR: the directory the GPU run reads")
        return 2
    known = json.loads(Path(cache, REFUSALS).read_text()) if Path(cache, REFUSALS).exists() else {}
    refused: dict[str, str] = {}
    for group in ("edge", "groups"):
        cases, module = modules[group]
        before = {c.name: known[c.name] for c in cases if c.name in known}  # a previous run's: tried first
        try:
            iree.compile_text(iree.lowered_text(without(module, set(before))), device)
            refused.update(before)
            continue
        except iree.IreeCompileError:
            pass
        for case in cases:
            try:
                iree.compile_text(iree.lowered_text(without(module, {c.name for c in cases} - {case.name})), device)
            except iree.IreeCompileError as error:
                refused[case.name] = str(error)[:300]
        iree.compile_text(iree.lowered_text(without(module, set(refused))), device)
    iree.compile_text(iree.lowered_text(sweep_module()), device)
    Path(cache, REFUSALS).write_text(json.dumps(refused, indent=1, sort_keys=True))
    print(f"compiled for CUDA ({' '.join(device.flags)}) into {cache}; {len(refused)} cases refused")
    for name, error in sorted(refused.items()):
        print(f"  @{name}: {error}")
    return 0


# Saving and replaying outputs --------------------------------------------------------------


def _key(backend: str, case: str, index: int, x: np.ndarray) -> tuple[str, np.ndarray]:
    """An npz key and array for output `index` (ml_dtypes arrays stored as their bits)."""
    if x.dtype in (ml_dtypes.bfloat16,):
        return f"{backend}|{case}|{index}|bfloat16", x.view(np.uint16)
    return f"{backend}|{case}|{index}|", x


def recording(backend: str, run, saved: dict):
    """`run` that also records its outputs, or its error, in `saved`."""

    def recorded(name, inputs):
        try:
            outputs = [np.asarray(x) for x in run(name, inputs)]
        except Exception as error:
            saved[f"{backend}|{name}|error|"] = np.array(f"{type(error).__name__}: {error}")
            raise
        for k, x in enumerate(outputs):
            key, array = _key(backend, name, k, x)
            saved[key] = array
        return outputs

    return recorded


class Replayed(Exception):
    """A backend's recorded error, raised again."""


def replayer(backend: str, saved) -> object:
    """A runner giving `backend`'s recorded outputs (raising its recorded error)."""
    by_case: dict[str, dict] = {}
    for key in saved.files:
        who, case, index, dtype = key.split("|")
        if who == backend:
            by_case.setdefault(case, {})[index] = (saved[key], dtype)

    def run(name, inputs):
        if name not in by_case:
            raise Replayed(f"the file holds no {backend} output of @{name} (saved by another version of the cases?)")
        recorded = by_case[name]
        if "error" in recorded:
            raise Replayed(str(recorded["error"][0]))
        outputs = [recorded[str(k)] for k in range(len(recorded))]
        return [x.view(ml_dtypes.bfloat16) if dtype == "bfloat16" else x for x, dtype in outputs]

    return run


# The run --------------------------------------------------------------------------------------


def run(modules, backends_of) -> list:
    """`differential_run` of every group on the runners `backends_of(group, cases, module)` gives."""
    outcomes = []
    for group, (cases, module) in modules.items():
        names = [c.name for c in cases]
        inputs_of = inputs_for(cases)
        outcomes += differential_run(module, names, backends_of(group, cases, module, inputs_of), inputs_of)
    return outcomes


def sweep(backends_of) -> list[str]:
    """The range sweep on the runners `backends_of(module, names, inputs_of)` gives: a line per
    op, dtype and backend past its ulp bound."""
    module = sweep_module()
    names = sweep_names()
    runners = backends_of(module, list(names), lambda f: [sweep_input(f.sym_name.data)])
    found = sweep_run(module, runners)
    failures = [f"  SWEEP @{name} {backend}: {reason}" for (backend, name), reason in found.items() if reason]
    print(f"range sweep: {len(names)} functions on {', '.join(runners)}: {len(failures)} past their ulp bound")
    print("\n".join(failures))
    return failures


def report(outcomes, sweep_failures=()) -> int:
    counts = Counter((o.backend, o.status) for o in outcomes)
    print("| backend | " + " | ".join(sorted({s for _, s in counts})) + " |")
    statuses = sorted({s for _, s in counts})
    print("|---|" + "---:|" * len(statuses))
    for backend in sorted({b for b, _ in counts}):
        print(f"| {backend} | " + " | ".join(str(counts[backend, s]) for s in statuses) + " |")
    failures = [o for o in outcomes if o.status in FAILURES]
    for o in failures:
        print(f"  {o.status.upper()} @{o.case} {o.backend} {o.op} #{o.output}: {o.detail}")
    witnessed = {(o.backend, o.op) for o in outcomes if o.status == "documented"}
    ran = {o.backend for o in outcomes}
    unseen = [d for d in GPU_DEVIATIONS if d.backend in ran and (d.backend, d.op) not in witnessed]
    for d in unseen:
        print(f"  UNSEEN {d.backend} {d.op} {d.kind}: no case shows it (remove it and its docs row)")
    failures += unseen
    refused = [o for o in outcomes if o.status == "refused"]
    for o in refused:
        print(f"  refused @{o.case} {o.backend}: {o.detail[:160]}")
    failures += list(sweep_failures)
    print("\nno undocumented difference" if not failures else f"\n{len(failures)} FAILURES (see above)")
    return 0 if not failures else 1


def backend_names(group: str) -> list[str]:
    """The GPU backends that run `group`: linalg cannot lower the splatting cases."""
    return ["xla-gpu"] if group == "splat" else ["xla-gpu", "iree-cuda"]


def gpu_backends(target: str | None, saved: dict):
    refused = {}
    cache = os.environ.get("RLX_IREE_CACHE_DIR")
    if cache and Path(cache, REFUSALS).exists():
        refused = json.loads(Path(cache, REFUSALS).read_text())

    def backends_of(group, cases, module, inputs_of, names=None):
        names = names or [c.name for c in cases]
        runners = {"xla-gpu": xla_runner(module, names, inputs_of, "gpu")}
        if "iree-cuda" in backend_names(group):
            compiled = iree.IreeModule(without(module, set(refused)), "cuda", cuda_target=target)

            def iree_cuda(name, inputs):
                if name in refused:
                    raise iree.IreeCompileError(f"error: the CUDA compiler refused @{name}: {refused[name]}")
                return compiled.run(name, inputs)

            runners["iree-cuda"] = iree_cuda
        return {b: recording(b, r, saved) for b, r in runners.items()}

    return backends_of


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compile-only", action="store_true", help="compile the CUDA modules into RLX_IREE_CACHE_DIR and exit")
    parser.add_argument("--cuda-target", metavar="SM", help="the GPU to compile for (e.g. sm_90); default: the present GPU's")
    parser.add_argument("--save", metavar="NPZ", help="write every backend output and error to this .npz file")
    parser.add_argument("--replay", metavar="NPZ", help="classify the outputs --save wrote (no GPU needed)")
    args = parser.parse_args(argv)
    modules = case_modules()
    target = gpu_target(args.cuda_target)
    if args.replay:
        saved = np.load(args.replay)
        replayed = {b: replayer(b, saved) for b in backend_names("edge")}
        return report(run(modules, lambda group, *_: {b: replayer(b, saved) for b in backend_names(group)}),
                      sweep(lambda *_: replayed))  # fmt: skip
    if args.compile_only:
        return compile_only(iree.device_named("cuda", target), modules)
    try:
        import jax

        jax.devices("gpu")
        iree._runtime_device(iree.device_named("cuda", target))
    except Exception as error:
        print(f"no GPU: {error}")
        return 2
    saved: dict = {}
    backends_of = gpu_backends(target, saved)
    outcomes = run(modules, backends_of)
    status = report(outcomes, sweep(lambda module, names, inputs_of: backends_of("sweep", [], module, inputs_of, names)))
    if args.save:
        np.savez_compressed(args.save, **saved)
        print(f"wrote {len(saved)} outputs to {args.save}")
    return status


if __name__ == "__main__":
    sys.exit(main())
