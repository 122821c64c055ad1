"""Where a GPU call spends its time: the CUDA kernels it launches, from one profiler for every
framework.

`jax.profiler` traces through CUPTI, which records every kernel the process launches, so one
trace covers PyTorch (eager, Triton kernels of `torch.compile`, cuBLAS, cuDNN), JAX and our
XLA and IREE modules alike. `profile(call, sync, calls)` runs `call` `calls` times under a
trace and returns, per call: the number of kernels, the GPU busy time (the sum of kernel
durations, ms) and the kernels taking the most time, grouped by name. Comparing busy time with
the measured wall time says whether a cell is bound by its kernels or by launch gaps.

Kernel events are read from the `/device:GPU:N` planes of the trace (`jax.profiler.ProfileData`),
on the lines that are CUDA streams (`Stream #...`); the summary lines XLA adds (`XLA Ops`,
`XLA Modules`, `Launch Stats`) would count each kernel twice and are skipped.
"""

from __future__ import annotations

import glob
import tempfile
from collections import defaultdict
from collections.abc import Callable

TOP = 8


def kernel_table(planes, calls: int) -> dict | None:
    """Per-call kernel statistics from a trace's planes (None: no GPU plane in the trace)."""
    totals: dict[str, float] = defaultdict(float)
    counts: dict[str, int] = defaultdict(int)
    seen_gpu, line_names = False, set()
    for plane in planes:
        if not plane.name.startswith("/device:GPU:"):
            continue
        seen_gpu = True
        for line in plane.lines:
            line_names.add(line.name)
            if not line.name.startswith("Stream"):
                continue
            for event in line.events:
                totals[event.name] += event.duration_ns / 1e6
                counts[event.name] += 1
    if not seen_gpu:
        return None
    ranked = sorted(totals, key=totals.get, reverse=True)
    return {
        "kernels_per_call": sum(counts.values()) / calls,
        "busy_ms_per_call": sum(totals.values()) / calls,
        "top": [[short(name), totals[name] / calls, counts[name] / calls] for name in ranked[:TOP]],
        "lines": sorted(line_names),  # what the trace had, to check the choice of stream lines
    }


def short(name: str, width: int = 60) -> str:
    """A kernel's name without its template arguments, at most `width` characters."""
    name = name.split("<", 1)[0].split("(", 1)[0]
    return name if len(name) <= width else name[: width - 1] + "…"


def profile(call: Callable[[], object], sync: Callable[[object], None], calls: int = 10) -> dict | None:
    """`calls` synchronised calls of `call` under `jax.profiler`: `kernel_table` of the trace."""
    import jax
    from jax.profiler import ProfileData

    with tempfile.TemporaryDirectory() as tmp:
        jax.profiler.start_trace(tmp)
        try:
            for _ in range(calls):
                sync(call())
        finally:
            jax.profiler.stop_trace()
        traces = sorted(glob.glob(f"{tmp}/**/*.xplane.pb", recursive=True))
        if not traces:
            return None
        return kernel_table(ProfileData.from_file(traces[-1]).planes, calls)


def profile_lines(title: str, rows: list[dict], columns: tuple[str, ...]) -> list[str]:
    """Markdown: per row and column, kernels and busy time per call against the wall time, then
    the kernels taking the most time."""
    lines = []
    for row in rows:
        for column in columns:
            cell = row["cells"].get(column) or {}
            prof = (cell.get("extra") or {}).get("profile")
            if not prof or cell.get("ms") is None:
                continue
            if not lines:
                lines += [f"#### Kernel profile: {title}", ""]
            busy, wall = prof["busy_ms_per_call"], cell["ms"]
            top = "; ".join(f"`{name}` {ms:.3f} ms ×{n:g}" for name, ms, n in prof["top"][:5])
            lines.append(f"* {row['row']}, {column}: {prof['kernels_per_call']:g} kernels, GPU busy "
                         f"{busy:.3f} of {wall:.3f} ms ({100 * busy / wall:.0f}%); {top}")  # fmt: skip
    return lines + [""] if lines else []
