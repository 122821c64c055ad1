"""GPU check: run the lowered LLaMA block and every op case on IREE's CUDA backend.

    python benchmarks/gpu_check.py                  # LLaMA graphs + every op case
    python benchmarks/gpu_check.py --no-cases       # LLaMA graphs only
    python benchmarks/gpu_check.py --repeat 50
    RLX_IREE_CACHE_DIR=DIR python benchmarks/gpu_check.py --compile-only --cuda-target sm_90   # no GPU needed
    RLX_IREE_CACHE_DIR=DIR python benchmarks/gpu_check.py --no-cpu         # on the GPU machine

A GPU machine without `iree-base-compiler` (it needs only `iree-base-runtime`, xdsl,
numpy and ml_dtypes) runs modules compiled ahead of time: `--compile-only` on a machine
with the compiler fills the cache directory with every CUDA module this script runs,
and the same cache directory makes the GPU run skip the compiler.

For a machine with an NVIDIA GPU, compiled for its own target (`cuda_target` in
`rlx_xdsl/backends/iree.py`: IREE 3.13 stops at `sm_89`, whose PTX a Hopper GPU JIT-compiles);
`--cuda-target` names the GPU to compile for ahead of time (resolved the same way, so
`sm_90` compiles `sm_89` code with IREE 3.13, as the GPU machine will look up). It needs nothing but this repository installed with
`pip install -e '.[iree]'`. It prints:

1. the device IREE found (or why it found none, exit status 2);
2. the LLaMA graphs (the shipped 1-layer block, and a 2-layer decoder at hidden 512,
   seq 128), each run by the numpy interpreter, IREE on the CPU and IREE on CUDA:
   median run times and the largest error relative to the interpreter's output;
3. every single-op case of `rlx_xdsl.testing.op_cases` compiled for CUDA and
   compared with the interpreter under the tests' dtype-aware tolerances.

Exit status 0 when everything matches, 1 when something does not.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
import traceback

import numpy as np

from rlx_xdsl.backends import iree as backend
from rlx_xdsl.ir.graph import find_function, random_inputs
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.differential import mismatch
from rlx_xdsl.testing.llama import EXAMPLE_CONFIG, build_llama, rope_tables
from rlx_xdsl.testing.op_cases import all_cases, case_inputs, cases_module

LLAMA_GRAPHS = {
    "llama_block (1 layer, examples/)": (1, EXAMPLE_CONFIG),
    "llama 2 layers, hidden 512, seq 128": (2, {"batch": 1, "seq": 128, "dim": 512, "n_heads": 8,
                                                "n_kv_heads": 8, "ffn": 1408}),
}  # fmt: skip


def median_seconds(call, repeat: int) -> float:
    call()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def llama_inputs(module, config: dict) -> list[np.ndarray]:
    inputs = random_inputs(module.ops.first, seed=0)
    inputs[1], inputs[2] = rope_tables(config["seq"], config["dim"] // config["n_heads"])
    return inputs[:3] + [
        (x / np.sqrt(x.shape[0])).astype(np.float32) if x.ndim == 2 else x for x in inputs[3:]
    ]


def llama_modules():
    """`(name, module, config)` of each LLaMA graph the check runs."""
    for name, (layers, config) in LLAMA_GRAPHS.items():
        yield name, build_llama(layers, **config), config


def compile_only(device: backend.Device) -> int:
    """Compile every CUDA module of the check into `RLX_IREE_CACHE_DIR` (no GPU used)."""
    if not os.environ.get("RLX_IREE_CACHE_DIR"):
        print("--compile-only needs RLX_IREE_CACHE_DIR: the directory the GPU run reads")
        return 2
    modules = [module for _, module, _ in llama_modules()] + [cases_module(all_cases())]
    for module in modules:
        backend.compile_text(backend.lowered_text(module), device)
    print(f"compiled {len(modules)} modules for CUDA ({' '.join(device.flags)}) into {os.environ['RLX_IREE_CACHE_DIR']}")
    return 0


def gpu_target(name: str | None) -> str | None:
    """The `--iree-cuda-target` for a GPU named like `sm_90` (None: the present GPU's)."""
    if name is None:
        return None
    major, minor = divmod(int(name.removeprefix("sm_").rstrip("a")), 10)
    return backend.cuda_target((major, minor), backend.compiler_accepts_cuda_target)


def check_llama(repeat: int, devices: tuple[str, ...], target: str | None) -> bool:
    print(
        "| graph | interpreter (ms) | "
        + " | ".join(f"IREE {d} (ms)" for d in devices)
        + " | "
        + " | ".join(f"{d} rel. error" for d in devices)
        + " |"
    )
    print("|---|---:|" + "---:|" * (2 * len(devices)))
    ok = True
    for name, module, config in llama_modules():
        inputs = llama_inputs(module, config)
        (want,) = run_function(module, "llama", inputs)
        interp = median_seconds(lambda: run_function(module, "llama", inputs), max(1, repeat // 10))
        row = [name, f"{interp * 1e3:.2f}"]
        errors = []
        for device in devices:
            compiled = backend.IreeModule(module, device, cuda_target=target)
            (got,) = compiled.run("llama", inputs)
            row.append(f"{median_seconds(lambda: compiled.run('llama', inputs), repeat) * 1e3:.2f}")
            scale = max(1.0, float(np.abs(want).max()))
            errors.append(float(np.abs(got.astype(np.float64) - want).max()) / scale)
            ok &= mismatch(got, want, approximate=True) is None
        row += [f"{e:.1e}" for e in errors]
        print("| " + " | ".join(row) + " |")
    return ok


def check_cases(target: str | None) -> bool:
    cases = all_cases()
    module = cases_module(cases)
    compiled = backend.IreeModule(module, "cuda", cuda_target=target)
    failures = []
    for case in cases:
        inputs = case_inputs(case, find_function(module, case.name))
        expected = run_function(module, case.name, inputs)
        try:
            got = compiled.run(case.name, inputs)
            reasons = [mismatch(g, e, case.approximate) for g, e in zip(got, expected)]
            failures += [f"@{case.name} output {i}: {r}" for i, r in enumerate(reasons) if r]
        except Exception as e:
            failures.append(f"@{case.name}: {type(e).__name__}: {e}")
    print(f"op cases on CUDA: {len(cases) - len({f.split()[0] for f in failures})} of {len(cases)} match")
    for failure in failures:
        print(f"  MISMATCH {failure}")
    return not failures


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--no-cases", action="store_true", help="skip the single-op cases")
    parser.add_argument("--no-cpu", action="store_true", help="skip IREE on the CPU (CUDA and the interpreter only)")
    parser.add_argument(
        "--compile-only", action="store_true", help="compile the CUDA modules into RLX_IREE_CACHE_DIR and exit"
    )
    parser.add_argument(
        "--cuda-target", metavar="SM", help="the GPU to compile for (e.g. sm_90); default: the present GPU's"
    )
    args = parser.parse_args(argv)
    target = gpu_target(args.cuda_target)
    device = backend.device_named("cuda", target)
    if args.compile_only:
        return compile_only(device)
    try:
        config = backend._runtime_device(device)
    except (backend.DeviceUnavailable, backend.IreeUnavailable) as e:
        print(f"no CUDA device: {e}")
        return 2
    print(f"# IREE CUDA device: {config.device}; compiler flags: {' '.join(device.flags)}")
    print()
    ok = True
    try:
        ok &= check_llama(args.repeat, ("cuda",) if args.no_cpu else ("cpu", "cuda"), target)
        print()
        if not args.no_cases:
            ok &= check_cases(target)
    except Exception:
        traceback.print_exc()
        return 1
    print("\nall results match the interpreter" if ok else "\nSOME RESULTS DIFFER (see above)")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
