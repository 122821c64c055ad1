"""`benchmarks/gpu.py --smoke`'s new cells run on the CPU: the cuDNN-attention column and the
whole AdamW training step (PyTorch eager, JAX jit, ours), at the smoke sizes."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

pytest.importorskip("jax")
pytest.importorskip("torch")

PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "gpu.py"


@pytest.fixture(scope="module")
def gpu():
    spec = importlib.util.spec_from_file_location("gpu_benchmark", PATH)
    bench = importlib.util.module_from_spec(spec)
    sys.modules["gpu_benchmark"] = bench  # dataclasses look their module up
    spec.loader.exec_module(bench)
    yield bench
    del sys.modules["gpu_benchmark"]


def smoke_env(gpu):
    return gpu.Env("cpu", warmup=0, repeat=1, torch_compile=False, iree=False)


def test_the_adamw_step_row_runs_every_column_and_the_losses_agree(gpu):
    """Two steps per column: the second takes the state the first returned (donated)."""
    env = gpu.Env("cpu", warmup=1, repeat=1, torch_compile=False, iree=False)
    row = gpu.step_row("small", gpu.SMOKE_STEP_ROWS["small"], env)
    cells = row["cells"]
    assert list(cells) == list(gpu.STEP_COLUMNS)
    assert cells["torch.compile"]["note"].startswith("not available: skipped on the CPU smoke run")
    for column in ("PyTorch eager", "JAX jit", "ours XLA"):
        assert cells[column]["ms"] is not None, cells[column]["note"]
    # The first step's loss in bf16 mixed precision, against PyTorch autocast's.
    assert cells["JAX jit"]["rel_err"] < 0.05
    assert cells["ours XLA"]["rel_err"] < 0.05
    text = gpu.render([{"machine": {"device": "cpu"}, "versions": {}, "repeat": 1, "warmup": 0, "step": [row]}])
    assert "#### The whole training step with AdamW, bf16 mixed precision (ms)" in text


def test_the_cudnn_attention_column_runs_on_the_smoke_run(gpu):
    config = gpu.SMOKE_ROWS["7b4"]
    w = gpu.Workload("7b4", config, gpu.init_params(config), gpu.init_inputs(config))
    cell = gpu.cell_of(lambda: gpu.jax_forward(w, smoke_env(gpu), cudnn=True))
    assert cell.ms is not None, cell.note
    assert "JAX jit (cuDNN attention)" in gpu.FORWARD_COLUMNS


def test_the_decode_row_runs_every_column_and_the_tokens_agree(gpu):
    row = gpu.decode_row(gpu.SMOKE_DECODE_ROW, gpu.SMOKE_DECODE_POS, smoke_env(gpu))
    cells = row["cells"]
    assert list(cells) == list(gpu.DECODE_COLUMNS)
    ran = [c for c in cells.values() if c["ms"] is not None]
    assert len(ran) == 3, [c["note"] for c in cells.values()]  # all but torch.compile
    assert len({c["extra"]["token"] for c in ran}) == 1  # one greedy token in every framework
    text = "\n".join(gpu.decode_lines([row]))
    assert "read per token at 4.8 TB/s" in text and "ours XLA" in text


def test_the_peer_goal_prints_the_fastest_peer_and_the_compute_limit(gpu):
    """The bf16 compute limit of the 7b4 rows is issue 36's (0.93 ms and 3.85 ms at 790 TFLOP/s,
    counted by hand there); the goal line names the fastest peer and each cell's % of it."""
    from dataclasses import asdict

    config = asdict(gpu.ROWS["7b4"])
    assert gpu.forward_flops(config) / gpu.BF16_FLOPS_PER_S * 1e3 == pytest.approx(0.93, abs=0.005)
    assert gpu.forward_flops(asdict(gpu.ROWS["7b4-2048"])) / gpu.BF16_FLOPS_PER_S * 1e3 == pytest.approx(3.85, abs=0.005)
    times = {"PyTorch eager": 3.17, "torch.compile": 2.19, "JAX jit": 1.85, "JAX jit (cuDNN attention)": 1.74}
    cells = {k: {"ms": times.get(k)} for k in gpu.FORWARD_COLUMNS} | {"ours XLA bf16 graph": {"ms": 2.08}}
    (line,) = [x for x in gpu.peer_lines([{"row": "7b4", "config": config, "cells": cells}]) if x.startswith("*")]
    assert "1.20× the fastest peer (JAX jit (cuDNN attention), 1.74 ms)" in line
    limit = gpu.forward_flops(config) / gpu.BF16_FLOPS_PER_S * 1e3
    assert f"ours XLA bf16 graph {100 * limit / 2.08:.0f}%" in line and "JAX jit (cuDNN attention) 53%" in line


def test_the_kernel_profile_counts_stream_kernels_once_per_call(gpu):
    """Kernels on the GPU planes' stream lines, per call; XLA's summary lines are not counted again."""
    from types import SimpleNamespace as NS

    def event(name, ns):
        return NS(name=name, duration_ns=ns)

    stream = NS(name="Stream #13(compute)", events=[event("gemm<f>", 3_000_000), event("fusion_1", 1_000_000)] * 2)
    summary = NS(name="XLA Ops", events=[event("dot.1", 3_000_000), event("fusion_1", 1_000_000)] * 2)
    planes = [NS(name="/host:CPU", lines=[NS(name="python", events=[event("x", 9)])]),
              NS(name="/device:GPU:0", lines=[stream, summary])]  # fmt: skip
    table = gpu.kernel_profile.kernel_table(planes, calls=2)
    assert table["kernels_per_call"] == 2
    assert table["busy_ms_per_call"] == 4.0
    assert table["top"] == [["gemm", 3.0, 1.0], ["fusion_1", 1.0, 1.0]]
    assert gpu.kernel_profile.kernel_table(planes[:1], calls=2) is None  # no GPU in the trace
    row = {"row": "7b4", "cells": {"ours XLA": {"ms": 5.0, "extra": {"profile": table}}, "JAX jit": {"ms": None}}}
    text = "\n".join(gpu.kernel_profile.profile_lines("decode", [row], ("JAX jit", "ours XLA")))
    assert "* 7b4, ours XLA: 2 kernels, GPU busy 4.000 of 5.000 ms (80%); `gemm` 3.000 ms ×1" in text


def test_a_profiled_cell_on_the_cpu_runs_under_the_tracer_and_keeps_no_gpu_profile(gpu):
    import jax
    import jax.numpy as jnp

    env = gpu.Env("cpu", warmup=0, repeat=1, torch_compile=False, iree=False, profile=True)
    f = jax.jit(lambda x: jnp.tanh(x) + 1)
    cell = gpu.cell_of(lambda: gpu.Cell(*gpu.measure(lambda: f(jnp.ones(4)), gpu.block, env)[:2]))
    assert cell.ms is not None and cell.extra is None
