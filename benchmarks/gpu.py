"""GPU benchmark (issues 20 and 36): the LLaMA graphs on one GPU, side by side in one run, against
PyTorch eager, `torch.compile` and JAX jit of the same model (also with cuDNN attention); one
training step (loss and gradients, f32); the whole training step with AdamW in bf16 mixed
precision; one greedy decode step with a static KV cache; and the throughput of data-parallel
training over 1, 2 and 4 GPUs.

    python benchmarks/gpu.py                                   # everything, on the GPU(s)
    python benchmarks/gpu.py --rows small --no-train --no-dp   # one graph row
    python benchmarks/gpu.py --json out.json                   # also write the results as JSON
    python benchmarks/gpu.py --render a.json b.json            # the tables of saved runs (DP rows merged)
    python benchmarks/gpu.py --smoke                           # tiny sizes on the CPU: checks the script

The model is `build_llama` (`rlx_xdsl/testing/llama.py`): the baselines are written by hand
in PyTorch and JAX (`rlx_xdsl/testing/llama_reference.py`, checked against the interpreter
by `tests/testing/test_llama_reference.py`); "ours" runs the MIR graph:

* XLA (`rlx_xdsl.backends.xla.XlaModule`): the f32 graph at full f32 precision, the f32
  graph with TF32 matmuls, the f32 graph after `rlx-amp{policy=torch-cuda low=bf16}`, and
  the graph built in bf16;
* IREE CUDA (`rlx_xdsl.backends.iree.IreeModule`, the GPU's own CUDA target).

"JAX jit (cuDNN attention)" is JAX jit with `jax.nn.dot_product_attention(...,
implementation="cudnn")` (on a CPU smoke run, XLA's attention: the column's code runs).

Under the inference table, each row's time against the fastest peer (PyTorch eager, torch.compile,
JAX jit, JAX jit with cuDNN attention) and, for a bf16 row, the % of the bf16 compute limit
(`forward_flops` at `BF16_FLOPS_PER_S`) that ours and each peer reach.

The AdamW table times one whole step, forward, backward and update, f32 master weights
and optimizer state, bf16 matmuls: PyTorch (`torch.autocast(bfloat16)`, `AdamW(fused=True)`;
eager, and `torch.compile` of the loss), JAX (jit of `value_and_grad` of the loss on
bf16 copies of the weights, then a hand-written AdamW), and ours (`@llama_train_step` of
`rlx-train-step{optimizer=adamw}` after `rlx-amp{policy=torch-cuda low=bf16}`, through
XLA). PyTorch updates its parameters in place; JAX feeds its updated state back (donated
on the GPU); ours keeps the same bound parameters, state and step for every call (the same
work per call). Its "rel. error" is the first step's loss against PyTorch eager's.

The decode row (`--decode`) is one greedy step of the 7b4 model with vocab 32,000 in bf16, batch
1, a static cache of 2,048 positions filled up to position 1,024 (`rlx_xdsl/testing/llama_decode.py`:
ours is `@decode` through XLA, writing with `mir.dynamic_update_slice` into caches donated
(`XlaModule(donate=...)`) and fed back; PyTorch updates its cache in place with `index_copy_`, eager and
`torch.compile(mode="reduce-overhead")`; JAX jit with `dynamic_update_slice`, caches donated on the
GPU). Each cell's percentage is the memory-bandwidth limit (weights and the cache up to the
position, read once at `HBM_BYTES_PER_S`) over its time; "token" is the greedy token it picked.

Parameters are on the device before timing in every column (ours: `bind`), the
activations too (torch tensors, `jax.Array`s, IREE buffers): a timed call moves nothing
from the host. Each time is the median (and minimum) of `--repeat` calls after
`--warmup` calls, each call synchronised (`torch.cuda.synchronize`, `block_until_ready`;
an IREE call returns when its results are ready). "rel. error" is
`max|out - ref| / max|ref|` against PyTorch eager in f32 (TF32 off) on the same weights.

A column that cannot run says why ("not available: ..."), a failure is a cell too; the
script never stops at one. Nothing asserts on times.

`--profile` also runs 10 calls of every cell under `jax.profiler` (`kernel_profile.py`: CUPTI
sees the kernels of every framework in the process) and prints, per cell, the kernels a call
launches, their summed GPU time against the wall time, and the kernels taking the most time.
"""

from __future__ import annotations

import os
import sys

# Before JAX starts: no pre-allocation (PyTorch and IREE share the GPU), and host devices
# for the data-parallel rows of a CPU smoke run.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
if "--smoke" in sys.argv and "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()

import argparse  # noqa: E402
import datetime  # noqa: E402
import gc  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from dataclasses import asdict, dataclass, replace  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, str(Path(__file__).parent))
import kernel_profile  # noqa: E402

from rlx_xdsl.ir.graph import graph_args  # noqa: E402
from rlx_xdsl.testing.llama_decode import (  # noqa: E402
    build_llama_decode,
    cache_names,
    decode_bytes,
    decode_inputs,
    jax_decode,
    torch_decode,
)
from rlx_xdsl.testing.llama_reference import (  # noqa: E402
    LlamaConfig,
    init_inputs,
    init_params,
    jax_llama,
    jax_loss,
    labels,
    torch_llama,
    torch_loss,
)

ROWS = {
    "small": LlamaConfig(2, batch=1, seq=128, dim=512, n_heads=8, n_kv_heads=8, ffn=1408, dtype="f32"),
    "7b4": LlamaConfig(4, batch=1, seq=512, dim=4096, n_heads=32, n_kv_heads=8, ffn=11008, dtype="bf16"),
    "7b4-2048": LlamaConfig(4, batch=1, seq=2048, dim=4096, n_heads=32, n_kv_heads=8, ffn=11008, dtype="bf16"),
}
"""The graph rows of issue 20's table."""

SMOKE_ROWS = {
    "small": LlamaConfig(2, batch=1, seq=16, dim=32, n_heads=4, n_kv_heads=4, ffn=48, dtype="f32"),
    "7b4": LlamaConfig(2, batch=1, seq=16, dim=64, n_heads=8, n_kv_heads=2, ffn=96, dtype="bf16"),
    "7b4-2048": LlamaConfig(2, batch=1, seq=32, dim=64, n_heads=8, n_kv_heads=2, ffn=96, dtype="bf16"),
}

TRAIN_ROWS = {
    "small": replace(ROWS["small"], vocab=1024),
    "7b4": replace(ROWS["7b4"], dtype="f32", vocab=32000),
}
"""One training step (loss, then the gradient of every parameter), in f32."""

SMOKE_TRAIN_ROWS = {"small": replace(SMOKE_ROWS["small"], vocab=64), "7b4": replace(SMOKE_ROWS["7b4"], dtype="f32", vocab=64)}

STEP_ROWS = TRAIN_ROWS
"""The whole training step (forward, backward, AdamW) in bf16 mixed precision: f32 weights and state."""

SMOKE_STEP_ROWS = SMOKE_TRAIN_ROWS

DECODE_ROW = replace(ROWS["7b4"], seq=2048, vocab=32000)
"""The decode row: `seq` is the static cache's length; the step is at `DECODE_POS`."""
DECODE_POS = 1024
SMOKE_DECODE_ROW = replace(SMOKE_ROWS["7b4"], seq=32, vocab=64)
SMOKE_DECODE_POS = 16
HBM_BYTES_PER_S = 4.8e12
"""The H200's memory bandwidth: the decode row's limit."""
BF16_FLOPS_PER_S = 790e12
"""The H200's dense bf16 tensor-core throughput: the bf16 inference rows' compute limit."""
PEER_COLUMNS = ("PyTorch eager", "torch.compile", "JAX jit", "JAX jit (cuDNN attention)")
"""The peers an inference row's goal compares ours with (the fastest of them that ran)."""

AMP = "rlx-amp{policy=torch-cuda low=bf16}"
CLEANUP = "rlx-canonicalize,rlx-dce"
"""What every "ours" graph runs through first: the cleanup a user's pipeline starts with
(it folds attention over repeated GQA heads into attention over the grouped ones)."""
GRAD = "rlx-prepare-ad,rlx-grad{func=llama},rlx-dce"
ADAMW = {"lr": 1e-4, "beta1": 0.9, "beta2": 0.999, "eps": 1e-8, "weight_decay": 0.01}
"""The step rows' AdamW (PyTorch's defaults but the learning rate)."""
TRAIN_STEP = (
    f"{CLEANUP},rlx-prepare-ad,rlx-train-step{{func=llama optimizer=adamw "
    + " ".join(f"{k.replace('_', '-')}={v:.6e}" for k, v in ADAMW.items())  # 1.000000e-08: a number to xDSL
    + f"}},rlx-dce,{AMP}"
)

FORWARD_COLUMNS = (
    "PyTorch eager", "torch.compile", "JAX jit", "JAX jit (cuDNN attention)", "JAX jit (f32 highest)",
    "ours XLA f32", "ours XLA f32 TF32", "ours XLA bf16 (amp)", "ours XLA bf16 graph", "ours IREE",
)  # fmt: skip
TRAIN_COLUMNS = ("PyTorch autograd", "JAX jit grad", "ours XLA f32", "ours XLA f32 TF32", "ours IREE")
STEP_COLUMNS = ("PyTorch eager", "torch.compile", "JAX jit", "ours XLA")
DECODE_COLUMNS = STEP_COLUMNS


class NotAvailable(Exception):
    """A column that cannot run on this machine, and why."""


@dataclass
class Cell:
    """One measurement: median and minimum milliseconds, error against the reference, or why not."""

    ms: float | None = None
    min_ms: float | None = None
    rel_err: float | None = None
    note: str = ""
    extra: dict | None = None

    def text(self) -> str:
        if self.ms is None:
            return self.note or "—"
        err = f" ({self.rel_err:.1e})" if self.rel_err is not None else ""
        return f"{self.ms:.2f}{err}"


@dataclass
class Env:
    """Where and how the run measures."""

    device: str  # "gpu" or "cpu" (the smoke run)
    warmup: int
    repeat: int
    torch_compile: bool
    iree: bool
    profile: bool = False

    @property
    def iree_device(self) -> str:
        return "cuda" if self.device == "gpu" else "cpu"


# Timing ---------------------------------------------------------------------------


def measure(call: Callable[[], object], sync: Callable[[object], None], env: Env) -> tuple[float, float, object]:
    """Median and minimum milliseconds of `call` (each call synchronised), and its last output."""
    out = None
    for _ in range(env.warmup):
        out = call()
        sync(out)
    times = []
    for _ in range(env.repeat):
        start = time.perf_counter()
        out = call()
        sync(out)
        times.append((time.perf_counter() - start) * 1e3)
    if env.profile:
        PROFILE["last"] = kernel_profile.profile(call, sync)
    return statistics.median(times), min(times), out


PROFILE: dict[str, dict | None] = {}
"""The kernel profile of the cell being measured (`--profile`), for `cell_of` to keep."""


def rel_err(got, ref) -> float | None:
    if ref is None:
        return None
    got = np.asarray(got, dtype=np.float64)
    return float(np.abs(got - ref).max() / max(np.abs(ref).max(), 1e-30))


def free() -> None:
    """Release what the last column left on the device."""
    gc.collect()
    try:
        import torch

        if torch.cuda.is_available():
            torch.cuda.empty_cache()
    except ImportError:
        pass


def first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0][:160]}" if text else type(e).__name__


def cell_of(column: Callable[[], Cell]) -> Cell:
    PROFILE.clear()
    try:
        cell = column()
        if PROFILE.get("last"):
            cell.extra = (cell.extra or {}) | {"profile": PROFILE["last"]}
        return cell
    except NotAvailable as e:
        return Cell(note=f"not available: {e}")
    except Exception as e:  # a failing column is a result too
        return Cell(note=f"failed: {first_line(e)}")
    finally:
        free()


def row_of(name: str, config: LlamaConfig, columns: dict[str, Callable[[], Cell]]) -> dict:
    """A table row: each column's cell, in order (progress on stderr)."""
    cells = {}
    for column, run in columns.items():
        print(f"#   {column}", file=sys.stderr)
        cells[column] = asdict(cell_of(run))
    return {"row": name, "config": asdict(config), "cells": cells}


# The frameworks -------------------------------------------------------------------


def torch_device(env: Env):
    try:
        import torch
    except ImportError:
        raise NotAvailable("PyTorch is not installed") from None
    if env.device == "gpu" and not torch.cuda.is_available():
        raise NotAvailable("PyTorch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False  # f32 means f32 (PyTorch's default, made sure)
    torch.backends.cudnn.allow_tf32 = False
    return torch, torch.device("cuda" if env.device == "gpu" else "cpu")


def torch_sync(env: Env):
    import torch

    return (lambda _: torch.cuda.synchronize()) if env.device == "gpu" else (lambda _: None)


def jax_device(env: Env):
    try:
        import jax
    except ImportError:
        raise NotAvailable("JAX is not installed") from None
    try:
        devices = jax.devices(env.device)
    except RuntimeError as e:
        raise NotAvailable(f"JAX has no {env.device} device ({first_line(e)})") from None
    return jax, devices


def block(out) -> None:
    import jax

    jax.block_until_ready(out)


def numpy_dtype(name: str):
    """The numpy dtype of "f32" or "bf16" (ml_dtypes' bfloat16, which JAX shares)."""
    import ml_dtypes

    return {"f32": np.dtype(np.float32), "bf16": np.dtype(ml_dtypes.bfloat16)}[name]


def ordered(module, values: dict[str, np.ndarray], function: str = "llama") -> tuple[dict, list[str]]:
    """`values` cast to `function`'s argument dtypes: (params by name, the input names in order)."""
    f = next(op for op in module.ops if op.sym_name.data == function)
    from rlx_xdsl import dtypes

    params, inputs = {}, []
    for a in graph_args(f):
        if a.is_param:
            params[a.name] = values[a.name].astype(dtypes.numpy_dtype(a.type.element_type))
        else:
            inputs.append(a.name)
    return params, inputs


def apply(module, pipeline: str):
    from rlx_xdsl.context import make_context
    from rlx_xdsl.transforms import get_all_passes
    from rlx_xdsl.transforms.pipeline import parse_pipeline, run_passes

    run_passes(parse_pipeline(pipeline, get_all_passes()).passes, make_context(), module)
    return module


def xla_module_class():
    try:
        from rlx_xdsl.backends.xla import XlaModule
    except ImportError as e:
        raise NotAvailable(f"no XLA backend in this tree ({e.name or first_line(e)})") from None
    return XlaModule


def iree_compiled(iree, module, env: Env):
    """`module` compiled by IREE for the run's device (from `RLX_IREE_CACHE_DIR` where there is no compiler)."""
    try:
        return iree.IreeModule(module, env.iree_device)
    except iree.IreeUnavailable as e:
        raise NotAvailable(f"{e}; no compiled module in RLX_IREE_CACHE_DIR (see --iree-compile-only)") from None


def iree_backend(env: Env):
    if not env.iree:
        raise NotAvailable("--no-iree")
    from rlx_xdsl.backends import iree

    try:
        iree._runtime_device(iree.device_named(env.iree_device))
    except (iree.IreeUnavailable, iree.DeviceUnavailable) as e:
        raise NotAvailable(str(e)) from None
    return iree


# Forward columns ------------------------------------------------------------------


@dataclass
class Workload:
    """One row: its config, f32 weights and inputs (host), and the reference output."""

    name: str
    config: LlamaConfig
    params: dict[str, np.ndarray]
    inputs: dict[str, np.ndarray]
    reference: np.ndarray | None = None


def torch_forward(w: Workload, env: Env, *, compiled: bool = False, dtype: str | None = None) -> Cell:
    torch, dev = torch_device(env)
    if compiled and env.device == "cpu" and not env.torch_compile:
        raise NotAvailable("skipped on the CPU smoke run (slow to compile; --torch-compile runs it)")
    dt = {"f32": torch.float32, "bf16": torch.bfloat16}[dtype or w.config.dtype]
    params = {k: torch.from_numpy(v).to(dev, dt) for k, v in w.params.items()}
    inputs = {k: torch.from_numpy(v).to(dev, dt) for k, v in w.inputs.items()}

    def model(p, x, cos, sin):
        return torch_llama(p, x, cos, sin, w.config)

    fn = torch.compile(model) if compiled else model
    with torch.no_grad():
        median, low, out = measure(lambda: fn(params, **inputs), torch_sync(env), env)
    return Cell(median, low, rel_err(out.float().cpu().numpy(), w.reference))


def reference_output(w: Workload, env: Env) -> np.ndarray | None:
    """PyTorch eager in f32 (TF32 off): the reference every column is compared with."""
    try:
        torch, dev = torch_device(env)
    except NotAvailable:
        return None
    params = {k: torch.from_numpy(v).to(dev) for k, v in w.params.items()}
    inputs = {k: torch.from_numpy(v).to(dev) for k, v in w.inputs.items()}
    with torch.no_grad():
        out = torch_llama(params, **inputs, config=w.config).cpu().numpy().astype(np.float64)
    del params, inputs
    free()
    return out


def jax_forward(w: Workload, env: Env, *, highest: bool = False, cudnn: bool = False) -> Cell:
    if highest and w.config.dtype != "f32":
        raise NotAvailable("an f32 row's column")
    if cudnn and env.device == "gpu" and w.config.dtype == "f32":
        raise NotAvailable("cuDNN attention takes bf16/f16 only")
    jax, devices = jax_device(env)
    dt = numpy_dtype(w.config.dtype)
    params = jax.device_put({k: v.astype(dt) for k, v in w.params.items()}, devices[0])
    inputs = jax.device_put({k: v.astype(dt) for k, v in w.inputs.items()}, devices[0])
    implementation = "cudnn" if cudnn and env.device == "gpu" else None
    fn = jax.jit(lambda p, x, cos, sin: jax_llama(p, x, cos, sin, w.config, implementation))
    precision = "highest" if highest else None
    with jax.default_matmul_precision(precision):
        median, low, out = measure(lambda: fn(params, **inputs), block, env)
    return Cell(median, low, rel_err(np.asarray(out.astype(np.float32)), w.reference))


def xla_forward(w: Workload, env: Env, *, graph_dtype: str, tf32: bool = False, amp: bool = False) -> Cell:
    XlaModule = xla_module_class()
    jax, devices = jax_device(env)
    module = w.config.module(dtype=graph_dtype)
    apply(module, CLEANUP)
    if amp:
        apply(module, AMP)
    params, names = ordered(module, w.params)
    xm = XlaModule(module, device=env.device, function="llama", tf32=tf32)
    xm.bind(params)
    dt = numpy_dtype(graph_dtype)
    args = [jax.device_put(w.inputs[n].astype(dt), devices[0]) for n in names]
    median, low, out = measure(lambda: xm(*args), block, env)
    return Cell(median, low, rel_err(np.asarray(out[0]).astype(np.float32), w.reference))


def iree_forward(w: Workload, env: Env) -> Cell:
    iree = iree_backend(env)
    module = w.config.module()
    params, names = ordered(module, w.params)
    compiled = iree_compiled(iree, module, env)
    compiled.bind("llama", params)
    dt = numpy_dtype(w.config.dtype)
    args = [compiled.put("llama", n, w.inputs[n].astype(dt)) for n in names]
    median, low, out = measure(lambda: compiled.run("llama", args, to_host=False), lambda _: None, env)
    (got,) = compiled.fetch("llama", out)
    target = compiled.device.flags[-1].split("=")[-1] if env.iree_device == "cuda" else "llvm-cpu"
    return Cell(median, low, rel_err(got.astype(np.float32), w.reference), extra={"target": target})


def forward_row(name: str, config: LlamaConfig, env: Env) -> dict:
    print(f"# row {name}: {config}", file=sys.stderr)
    w = Workload(name, config, init_params(config), init_inputs(config))
    w.reference = reference_output(w, env)
    columns = {
        "PyTorch eager": lambda: torch_forward(w, env),
        "torch.compile": lambda: torch_forward(w, env, compiled=True),
        "JAX jit": lambda: jax_forward(w, env),
        "JAX jit (cuDNN attention)": lambda: jax_forward(w, env, cudnn=True),
        "JAX jit (f32 highest)": lambda: jax_forward(w, env, highest=True),
        "ours XLA f32": lambda: xla_forward(w, env, graph_dtype="f32"),
        "ours XLA f32 TF32": lambda: xla_forward(w, env, graph_dtype="f32", tf32=True),
        "ours XLA bf16 (amp)": lambda: xla_forward(w, env, graph_dtype="f32", amp=True),
        "ours XLA bf16 graph": lambda: xla_forward(w, env, graph_dtype="bf16"),
        "ours IREE": lambda: iree_forward(w, env),
    }
    return row_of(name, config, columns)


# Training step --------------------------------------------------------------------


@dataclass
class TrainWorkload(Workload):
    """A training row: as `Workload`, the reference being PyTorch's f32 loss and gradients."""

    reference: tuple[float, dict[str, np.ndarray]] | None = None


def grad_errors(loss: float, grads: dict[str, np.ndarray], w: TrainWorkload) -> tuple[float | None, dict]:
    """The worst relative gradient error over the parameters, and the loss's relative error."""
    if w.reference is None:
        return None, {"loss": loss}
    ref_loss, ref_grads = w.reference
    worst = max(rel_err(np.asarray(grads[k], dtype=np.float32), ref_grads[k]) for k in ref_grads)
    return worst, {"loss": loss, "loss_rel_err": abs(loss - ref_loss) / abs(ref_loss)}


def torch_train(w: TrainWorkload, env: Env, keep: bool = False) -> Cell:
    torch, dev = torch_device(env)
    params = {k: torch.from_numpy(v).to(dev).requires_grad_() for k, v in w.params.items()}
    inputs = {k: torch.from_numpy(v).to(dev) for k, v in w.inputs.items()}
    target = torch.from_numpy(labels(w.config)).to(dev)

    def step():
        loss = torch_loss(params, **inputs, target=target, config=w.config)
        return loss, torch.autograd.grad(loss, list(params.values()))

    median, low, (loss, grads) = measure(step, torch_sync(env), env)
    host = {k: g.cpu().numpy().astype(np.float64) for k, g in zip(params, grads)}
    if keep:
        w.reference = (float(loss.detach()), host)
    worst, extra = grad_errors(float(loss.detach()), host, w)
    return Cell(median, low, worst, extra=extra)


def jax_train(w: TrainWorkload, env: Env) -> Cell:
    jax, devices = jax_device(env)
    params = jax.device_put(w.params, devices[0])
    inputs = jax.device_put(w.inputs, devices[0])
    target = jax.device_put(labels(w.config), devices[0])
    step = jax.jit(jax.value_and_grad(lambda p, x, cos, sin, t: jax_loss(p, x, cos, sin, t, w.config)))
    median, low, (loss, grads) = measure(lambda: step(params, **inputs, t=target), block, env)
    worst, extra = grad_errors(float(loss), {k: np.asarray(v) for k, v in grads.items()}, w)
    return Cell(median, low, worst, extra=extra)


def grad_module(config: LlamaConfig):
    return apply(config.module(loss=True), GRAD)


def xla_train(w: TrainWorkload, env: Env, *, tf32: bool = False) -> Cell:
    XlaModule = xla_module_class()
    jax, devices = jax_device(env)
    module = grad_module(w.config)
    params, names = ordered(module, w.params, "llama_grad")
    xm = XlaModule(module, device=env.device, function="llama_grad", tf32=tf32)
    xm.bind(params | {"d_output": np.ones((), np.float32)})
    args = [jax.device_put(w.inputs[n], devices[0]) for n in names if n != "d_output"]
    median, low, out = measure(lambda: xm(*args), block, env)
    grads = dict(zip(params, (np.asarray(g) for g in out[1:])))
    worst, extra = grad_errors(float(np.asarray(out[0])), grads, w)
    return Cell(median, low, worst, extra=extra)


def iree_train(w: TrainWorkload, env: Env) -> Cell:
    iree = iree_backend(env)
    module = grad_module(w.config)
    params, names = ordered(module, w.params, "llama_grad")
    compiled = iree_compiled(iree, module, env)
    compiled.bind("llama_grad", params)
    values = w.inputs | {"d_output": np.ones((), np.float32)}
    args = [compiled.put("llama_grad", n, values[n]) for n in names]
    median, low, out = measure(lambda: compiled.run("llama_grad", args, to_host=False), lambda _: None, env)
    host = compiled.fetch("llama_grad", out)
    worst, extra = grad_errors(float(host[0]), dict(zip(params, host[1:])), w)
    return Cell(median, low, worst, extra=extra)


def train_row(name: str, config: LlamaConfig, env: Env) -> dict:
    print(f"# training row {name}: {config}", file=sys.stderr)
    w = TrainWorkload(name, config, init_params(config), init_inputs(config))
    columns = {
        "PyTorch autograd": lambda: torch_train(w, env, keep=True),
        "JAX jit grad": lambda: jax_train(w, env),
        "ours XLA f32": lambda: xla_train(w, env),
        "ours XLA f32 TF32": lambda: xla_train(w, env, tf32=True),
        "ours IREE": lambda: iree_train(w, env),
    }
    return row_of(name, config, columns)


# The whole training step: forward, backward, AdamW, bf16 mixed precision -----------


def loss_error(loss: float, w: TrainWorkload) -> float | None:
    return None if w.reference is None else abs(loss - w.reference[0]) / abs(w.reference[0])


def torch_step(w: TrainWorkload, env: Env, *, compiled: bool = False) -> Cell:
    torch, dev = torch_device(env)
    if compiled and env.device == "cpu" and not env.torch_compile:
        raise NotAvailable("skipped on the CPU smoke run (slow to compile; --torch-compile runs it)")
    params = {k: torch.from_numpy(v).to(dev).requires_grad_() for k, v in w.params.items()}
    inputs = {k: torch.from_numpy(v).to(dev) for k, v in w.inputs.items()}
    target = torch.from_numpy(labels(w.config)).to(dev)
    optimizer = torch.optim.AdamW(
        params.values(), lr=ADAMW["lr"], betas=(ADAMW["beta1"], ADAMW["beta2"]), eps=ADAMW["eps"],
        weight_decay=ADAMW["weight_decay"], fused=True,
    )  # fmt: skip

    def loss_of():
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            return torch_loss(params, **inputs, target=target, config=w.config)

    forward = torch.compile(loss_of) if compiled else loss_of
    losses = []

    def step():
        loss = forward()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        losses.append(loss.detach())
        return loss

    median, low, _ = measure(step, torch_sync(env), env)
    first = float(losses[0])
    if w.reference is None:
        w.reference = (first, {})
    return Cell(median, low, loss_error(first, w), extra={"loss": first})


def jax_step(w: TrainWorkload, env: Env) -> Cell:
    jax, devices = jax_device(env)
    import jax.numpy as jnp

    low = numpy_dtype("bf16")
    b1, b2, lr, eps, wd = (ADAMW[k] for k in ("beta1", "beta2", "lr", "eps", "weight_decay"))

    def loss_of(p, x, cos, sin, t):
        half = jax.tree.map(lambda a: a.astype(low), p)
        return jax_loss(half, x.astype(low), cos.astype(low), sin.astype(low), t, w.config)

    def step(p, m, v, n, x, cos, sin, t):
        loss, g = jax.value_and_grad(loss_of)(p, x, cos, sin, t)
        m = jax.tree.map(lambda m, g: b1 * m + (1 - b1) * g, m, g)
        v = jax.tree.map(lambda v, g: b2 * v + (1 - b2) * g * g, v, g)
        c1, c2 = 1 - b1**n, 1 - b2**n
        p = jax.tree.map(lambda p, m, v: p * (1 - lr * wd) - lr / c1 * m / (jnp.sqrt(v) / jnp.sqrt(c2) + eps), p, m, v)
        return loss, p, m, v, n + 1

    fn = jax.jit(step, donate_argnums=(0, 1, 2) if env.device == "gpu" else ())
    zeros = {k: np.zeros_like(v) for k, v in w.params.items()}
    state = list(jax.device_put([w.params, zeros, zeros, np.float32(1)], devices[0]))
    inputs = jax.device_put(w.inputs, devices[0])
    target = jax.device_put(labels(w.config), devices[0])
    losses = []

    def call():
        loss, *state[:] = fn(*state, **inputs, t=target)
        losses.append(loss)
        return loss

    median, low_ms, _ = measure(call, block, env)
    first = float(losses[0])
    return Cell(median, low_ms, loss_error(first, w), extra={"loss": first})


def train_step_module(config: LlamaConfig):
    return apply(config.module(loss=True), TRAIN_STEP)


def xla_step(w: TrainWorkload, env: Env) -> Cell:
    XlaModule = xla_module_class()
    jax, devices = jax_device(env)
    module = train_step_module(w.config)
    params, names = ordered(module, w.params, "llama_train_step")
    states = {n: np.zeros_like(w.params[n[2:]]) for n in names if n[:2] in ("m_", "v_")}
    # The step's results after the loss: the parameters, then the states, each in argument
    # order. Like the JAX column, the step updates them in place (donated) and the next call
    # takes the updated ones.
    updated = [*params, *(n for n in names if n in states)]
    xm = XlaModule(module, device=env.device, function="llama_train_step", donate=updated)
    xm.bind({"step": np.ones((), np.float32)})
    values = jax.device_put({n: w.inputs[n] for n in names if n in w.inputs} | params | states, devices[0])
    losses = []

    def call():
        out = xm(*(values[n] for n in xm.unbound))
        values.update(zip(updated, out[1:]))
        losses.append(out[0])
        return out[0]

    median, low, _ = measure(call, block, env)
    loss = float(np.asarray(losses[0]))
    return Cell(median, low, loss_error(loss, w), extra={"loss": loss})


def step_row(name: str, config: LlamaConfig, env: Env) -> dict:
    print(f"# AdamW step row {name}: {config}", file=sys.stderr)
    w = TrainWorkload(name, config, init_params(config), init_inputs(config))
    columns = {
        "PyTorch eager": lambda: torch_step(w, env),
        "torch.compile": lambda: torch_step(w, env, compiled=True),
        "JAX jit": lambda: jax_step(w, env),
        "ours XLA": lambda: xla_step(w, env),
    }
    return row_of(name, config, columns)


# One greedy decode step with a static KV cache --------------------------------------


@dataclass
class DecodeWorkload:
    config: LlamaConfig
    pos: int
    params: dict[str, np.ndarray]
    inputs: dict[str, np.ndarray]

    def cell(self, median: float, low: float, token) -> Cell:
        limit_ms = decode_bytes(self.config, self.pos) / HBM_BYTES_PER_S * 1e3
        return Cell(median, low, extra={"token": int(np.asarray(token).reshape(-1)[0]),
                                        "limit_pct": 100 * limit_ms / median})  # fmt: skip


def torch_decode_cell(w: DecodeWorkload, env: Env, *, compiled: bool = False) -> Cell:
    torch, dev = torch_device(env)
    if compiled and env.device == "cpu" and not env.torch_compile:
        raise NotAvailable("skipped on the CPU smoke run (slow to compile; --torch-compile runs it)")
    params = {k: torch.from_numpy(v).to(dev, torch.bfloat16) for k, v in w.params.items()}
    inputs = {k: torch.from_numpy(np.array(v)).to(dev) for k, v in w.inputs.items()}
    inputs = {k: v if k == "pos" else v.to(torch.bfloat16) for k, v in inputs.items()}
    step = torch.compile(torch_decode, mode="reduce-overhead") if compiled else torch_decode
    with torch.no_grad():
        median, low, token = measure(lambda: step(params, inputs, w.config), torch_sync(env), env)
    return w.cell(median, low, token.cpu().numpy())


def jax_decode_cell(w: DecodeWorkload, env: Env) -> Cell:
    jax, devices = jax_device(env)
    bf16 = numpy_dtype("bf16")
    params = jax.device_put({k: v.astype(bf16) for k, v in w.params.items()}, devices[0])
    values = {k: v if k == "pos" else v.astype(bf16) for k, v in w.inputs.items()}
    caches = jax.device_put({k: values[k] for k in cache_names(w.config)}, devices[0])
    rest = jax.device_put({k: v for k, v in values.items() if k not in caches}, devices[0])
    fn = jax.jit(lambda p, c, r: jax_decode(p, r | c, w.config), donate_argnums=(1,) if env.device == "gpu" else ())
    state = [caches]

    def call():
        token, state[0] = fn(params, state[0], rest)
        return token

    median, low, token = measure(call, block, env)
    return w.cell(median, low, token)


def xla_decode_cell(w: DecodeWorkload, env: Env) -> Cell:
    XlaModule = xla_module_class()
    jax, devices = jax_device(env)
    module = build_llama_decode(w.config)
    params, names = ordered(module, w.params, "decode")
    caches = cache_names(w.config)
    xm = XlaModule(module, device=env.device, function="decode", donate=caches)
    xm.bind(params)
    bf16 = numpy_dtype("bf16")
    args = [jax.device_put(w.inputs[n] if n == "pos" else w.inputs[n].astype(bf16), devices[0]) for n in names]
    slots = [names.index(n) for n in caches]

    def call():
        token, *updated = xm(*args)  # the donated caches' buffers now hold the updated ones
        for slot, cache in zip(slots, updated, strict=True):
            args[slot] = cache
        return token

    median, low, token = measure(call, block, env)
    return w.cell(median, low, token)


def decode_row(config: LlamaConfig, pos: int, env: Env) -> dict:
    print(f"# decode row: {config}, position {pos}", file=sys.stderr)
    w = DecodeWorkload(config, pos, init_params(config), decode_inputs(config, pos))
    columns = {
        "PyTorch eager": lambda: torch_decode_cell(w, env),
        "torch.compile": lambda: torch_decode_cell(w, env, compiled=True),
        "JAX jit": lambda: jax_decode_cell(w, env),
        "ours XLA": lambda: xla_decode_cell(w, env),
    }
    row = row_of(f"decode at {pos}", config, columns)
    row["limit_ms"] = decode_bytes(config, pos) / HBM_BYTES_PER_S * 1e3
    row["bytes"] = decode_bytes(config, pos)
    return row


def decode_lines(rows: list[dict]) -> list[str]:
    """The decode table, then each column's % of the memory-bandwidth limit and its token."""
    lines = table("One greedy decode step, static KV cache (ms)", DECODE_COLUMNS, rows)
    for r in rows:
        parts = [f"{k} {c['extra']['limit_pct']:.0f}% (token {c['extra']['token']})"
                 for k, c in r["cells"].items() if c["ms"] is not None]  # fmt: skip
        lines += [f"Memory-bandwidth limit: {r['bytes'] / 1e9:.3f} GB read per token at "
                  f"{HBM_BYTES_PER_S / 1e12:.1f} TB/s = {r['limit_ms']:.3f} ms; reached: " + ", ".join(parts) + ".", ""]  # fmt: skip
    return lines


# Data-parallel training -----------------------------------------------------------


def data_parallel(module, n: int):
    """`module` split over `rlx.mesh = {data = n}`: `x` sharded on its batch dimension, the rest replicated."""
    from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, IntegerAttr, StringAttr, UnitAttr

    module.attributes["rlx.mesh"] = DictionaryAttr({"data": IntegerAttr(n, 64)})
    f = next(op for op in module.ops if op.sym_name.data == "llama_grad")
    attrs = [dict(d.data) for d in f.arg_attrs.data]
    for a in graph_args(f):
        if a.name == "x":
            attrs[a.index]["rlx.sharding"] = ArrayAttr([StringAttr("data"), UnitAttr(), UnitAttr()])
    f.arg_attrs = ArrayAttr([DictionaryAttr(d) for d in attrs])
    return module


def dp_cell(config: LlamaConfig, n: int, per_device: int, env: Env) -> Cell:
    XlaModule = xla_module_class()
    jax, devices = jax_device(env)
    if len(devices) < n:
        raise NotAvailable(f"JAX sees {len(devices)} {env.device} device(s)")
    global_config = replace(config, batch=n * per_device)
    module = grad_module(global_config)
    if n > 1:
        data_parallel(module, n)
    values = init_params(global_config) | init_inputs(global_config) | {"d_output": np.ones((), np.float32)}
    params, names = ordered(module, values, "llama_grad")
    xm = XlaModule(module, device=env.device, function="llama_grad")
    xm.bind(params | {"d_output": values["d_output"]})
    args = [values[n_] for n_ in names if n_ != "d_output"]
    mesh = getattr(xm, "mesh", None)
    if mesh is not None:  # the activations already on the devices, split as the module says
        from jax.sharding import NamedSharding, PartitionSpec

        specs = {"x": PartitionSpec("data")}
        args = [jax.device_put(v, NamedSharding(mesh, specs.get(k, PartitionSpec()))) for k, v in zip(names, args)]
    else:
        args = [jax.device_put(v, devices[0]) for v in args]
    median, low, out = measure(lambda: xm(*args), block, env)
    tokens = global_config.batch * global_config.seq
    return Cell(median, low, extra={"devices": n, "global_batch": global_config.batch,
                                    "tokens_per_s": tokens / (median / 1e3), "loss": float(np.asarray(out[0]))})  # fmt: skip


def dp_rows(config: LlamaConfig, counts: list[int], per_device: int, env: Env) -> list[dict]:
    rows = []
    for n in counts:
        print(f"# data-parallel training on {n} device(s)", file=sys.stderr)
        rows.append({"devices": n, "per_device_batch": per_device, "config": asdict(config),
                     "cell": asdict(cell_of(lambda: dp_cell(config, n, per_device, env)))})  # fmt: skip
    return rows


# Report ---------------------------------------------------------------------------


def versions() -> dict:
    found = {"python": platform.python_version(), "numpy": np.__version__}
    for module in ("torch", "jax", "jaxlib", "xdsl", "ml_dtypes"):
        try:
            found[module] = str(__import__(module).__version__)
        except Exception:
            found[module] = None
    for name, module in (("iree-runtime", "iree.runtime.version"), ("iree-compiler", "iree.compiler.version")):
        try:
            found[name] = str(__import__(module, fromlist=["VERSION"]).VERSION)
        except Exception:
            found[name] = None
    try:
        found["rlx-xdsl commit"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, cwd=Path(__file__).parent, timeout=10
        ).stdout.strip() or None
    except Exception:
        found["rlx-xdsl commit"] = None
    return found


def machine(env: Env) -> dict:
    info = {"device": env.device, "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    try:
        query = "name,driver_version,compute_cap,memory.total"
        out = subprocess.run(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=30).stdout  # fmt: skip
        info["gpus"] = [line.strip() for line in out.splitlines() if line.strip()]
    except (OSError, subprocess.SubprocessError):
        info["gpus"] = []
    try:
        import jax

        info["jax_devices"] = [str(d) for d in jax.devices(env.device)]
    except Exception as e:
        info["jax_devices"] = f"none ({first_line(e)})"
    if env.device == "gpu":
        try:
            from rlx_xdsl.backends import iree

            info["iree_cuda_target"] = iree.device_named("cuda").flags[-1]
        except Exception as e:
            info["iree_cuda_target"] = f"? ({first_line(e)})"
    info["cpu"] = platform.processor() or platform.machine()
    info["cpus"] = os.cpu_count()
    return info


def table(title: str, columns: tuple[str, ...], rows: list[dict]) -> list[str]:
    """A markdown table of `rows`; cells that did not run point to a numbered note below it."""
    lines = [f"#### {title}", "", "| row | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
    notes: list[str] = []
    for r in rows:
        c = r["config"]
        label = f"{r['row']}: {c['layers']} layers, dim {c['dim']}, heads {c['n_heads']}/{c['n_kv_heads']}, seq {c['seq']}, {c['dtype']}"
        cells = []
        for k in columns:
            cell = Cell(**r["cells"][k])
            if cell.ms is None and cell.note:
                if cell.note not in notes:
                    notes.append(cell.note)
                cells.append(f"—[{notes.index(cell.note) + 1}]")
            else:
                cells.append(cell.text())
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return lines + [""] + [f"[{i}] {note}  " for i, note in enumerate(notes, 1)] + [""]


def dp_table(rows: list[dict]) -> list[str]:
    lines = ["#### Data-parallel training (ours through XLA, `rlx.mesh = {data = N}`, batch split)", "",
             "| devices | global batch | step (ms) | tokens/s | speed-up over 1 | efficiency |", "|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    base = None
    for r in sorted(rows, key=lambda r: r["devices"]):
        cell = Cell(**r["cell"])
        if cell.ms is None:
            lines.append(f"| {r['devices']} | {r['devices'] * r['per_device_batch']} | {cell.note} | | | |")
            continue
        tps = cell.extra["tokens_per_s"]
        base = tps if r["devices"] == 1 else base
        speedup = f"{tps / base:.2f}×" if base else "—"
        eff = f"{tps / base / r['devices']:.0%}" if base else "—"
        lines.append(f"| {r['devices']} | {cell.extra['global_batch']} | {cell.ms:.2f} | {tps:,.0f} | {speedup} | {eff} |")
    return lines + [""]


def forward_flops(config: dict) -> float:
    """The multiply-adds (x2) of one forward pass of `build_llama`: the q, k, v, o and FFN
    projections, causal attention (half of the `S x S` scores and of `p @ v`: what a flash
    kernel computes), and the lm_head when there is a vocabulary."""
    b, s, d, f = config["batch"], config["seq"], config["dim"], config["ffn"]
    kv = config["n_kv_heads"] * (d // config["n_heads"])
    projections = 2 * b * s * (2 * d * d + 2 * d * kv + 3 * d * f)
    attention = 2 * b * s * s * d  # (q k^T + p v) / 2 for the causal mask
    head = 2 * b * s * d * (config.get("vocab") or 0)
    return config["layers"] * (projections + attention) + head


def peer_lines(rows: list[dict]) -> list[str]:
    """Issue 36's goal, row by row: ours through XLA at or below the fastest peer
    (`PEER_COLUMNS`), and, for a bf16 row, the % of the bf16 compute limit each reaches."""
    lines = []
    for r in rows:
        bf16 = r["config"]["dtype"] == "bf16"
        ours_name = "ours XLA bf16 graph" if bf16 else "ours XLA f32 TF32"  # JAX jit's f32 is TF32
        ours = r["cells"][ours_name]["ms"]
        peers = {k: r["cells"][k]["ms"] for k in PEER_COLUMNS if r["cells"][k]["ms"] is not None}
        if ours is None or not peers:
            lines.append(f"* {r['row']}: {ours_name} or every peer did not run")
            continue
        fastest = min(peers, key=peers.get)
        line = f"* {r['row']}: {ours_name} {ours:.2f} ms = {ours / peers[fastest]:.2f}× the fastest peer ({fastest}, {peers[fastest]:.2f} ms)"
        if bf16:
            limit = forward_flops(r["config"]) / BF16_FLOPS_PER_S * 1e3
            reached = ", ".join(f"{k} {100 * limit / ms:.0f}%" for k, ms in {ours_name: ours, **peers}.items())
            line += f"; bf16 compute limit {limit:.2f} ms, reached: {reached}"
        lines.append(line)
    return ["Goal (ours ≤ 1.00× the fastest peer):", "", *lines, ""] if lines else []


def goal_lines(rows: list[dict]) -> list[str]:
    """Issue 20's goal, row by row: ours through XLA (the graph in the row's dtype) against
    PyTorch eager (at or below) and JAX jit (within 1.2x; for f32, JAX at full precision too)."""
    lines = []
    for r in rows:
        ours_name = "ours XLA f32" if r["config"]["dtype"] == "f32" else "ours XLA bf16 graph"
        ours = r["cells"][ours_name]["ms"]
        if ours is None:
            lines.append(f"* {r['row']}: {ours_name} did not run")
            continue
        parts = []
        for base in ("PyTorch eager", "JAX jit", "JAX jit (f32 highest)"):
            ms = r["cells"][base]["ms"]
            if ms is not None:
                parts.append(f"{ours / ms:.2f}× {base}")
        lines.append(f"* {r['row']}: {ours_name} {ours:.2f} ms = " + ", ".join(parts))
    return ["Goal (ours ≤ 1.00× PyTorch eager, ≤ 1.20× JAX jit):", "", *lines, ""] if lines else []


def render(results: list[dict]) -> str:
    lines = []
    for res in results:
        m, v = res["machine"], res["versions"]
        lines += [f"### {m.get('date')}: {', '.join(m.get('gpus') or [m['device']])}", "",
                  "Versions: " + ", ".join(f"{k} {val}" for k, val in v.items() if val) + ".",
                  f"IREE CUDA target: `{m.get('iree_cuda_target', '-')}`. "
                  f"Median of {res['repeat']} calls after {res['warmup']} warm-ups; ms (rel. error against PyTorch f32).", ""]  # fmt: skip
        if res.get("forward"):
            lines += table("Inference (ms)", FORWARD_COLUMNS, res["forward"])
            lines += goal_lines(res["forward"])
            lines += peer_lines(res["forward"])
            lines += kernel_profile.profile_lines("inference", res["forward"], FORWARD_COLUMNS)
        if res.get("train"):
            lines += table("One training step: loss and every parameter's gradient (ms)", TRAIN_COLUMNS, res["train"])
            lines += kernel_profile.profile_lines("training", res["train"], TRAIN_COLUMNS)
        if res.get("step"):
            lines += table("The whole training step with AdamW, bf16 mixed precision (ms)", STEP_COLUMNS, res["step"])
            lines += kernel_profile.profile_lines("AdamW step", res["step"], STEP_COLUMNS)
        if res.get("decode"):
            lines += decode_lines(res["decode"])
            lines += kernel_profile.profile_lines("decode", res["decode"], DECODE_COLUMNS)
    dp = [r for res in results for r in res.get("dp", [])]
    if dp:
        best = {}
        for r in dp:  # several runs (1-, 2-, 4-GPU machines): the measured one of each count
            if r["devices"] not in best or r["cell"]["ms"] is not None:
                best[r["devices"]] = r
        c = dp[0]["config"]
        lines += [f"Data-parallel row: {c['layers']} layers, dim {c['dim']}, seq {c['seq']}, vocab {c['vocab']}, "
                  f"{dp[0]['per_device_batch']} sequences per device.", ""]  # fmt: skip
        lines += dp_table(list(best.values()))
    return "\n".join(lines)


def iree_compile_only(rows: dict, train_rows: dict, gpu: str | None) -> int:
    """Compile every CUDA module the IREE columns run into `RLX_IREE_CACHE_DIR` (no GPU needed;
    the GPU machine then needs only `iree-base-runtime`: the compiler wheel is too big to carry)."""
    from rlx_xdsl.backends import iree

    if not os.environ.get("RLX_IREE_CACHE_DIR"):
        print("--iree-compile-only needs RLX_IREE_CACHE_DIR: the directory the GPU run reads")
        return 2
    target = None
    if gpu is not None:
        major, minor = divmod(int(gpu.removeprefix("sm_").rstrip("a")), 10)
        target = iree.cuda_target((major, minor), iree.compiler_accepts_cuda_target)
    device = iree.device_named("cuda", target)
    modules = [(f"forward {n}", c.module()) for n, c in rows.items()]
    modules += [(f"training {n}", grad_module(c)) for n, c in train_rows.items()]
    failed = 0
    for name, module in modules:
        start = time.perf_counter()
        try:
            iree.compile_text(iree.lowered_text(module), device)
            print(f"{name}: compiled in {time.perf_counter() - start:.1f} s", flush=True)
        except iree.IreeCompileError as e:
            failed += 1
            print(f"{name}: FAILED: {e}", flush=True)
    print(f"compiled {len(modules) - failed} of {len(modules)} modules ({' '.join(device.flags)}) into {os.environ['RLX_IREE_CACHE_DIR']}")
    return 1 if failed else 0


def picked(parser: argparse.ArgumentParser, text: str, known: dict) -> list[str]:
    """The comma-separated row names of `text` ("none": no row), each one of `known`."""
    names = [] if text == "none" else text.split(",")
    for name in names:
        if name not in known:
            parser.error(f"unknown row '{name}' (known: {', '.join(known)})")
    return names


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="small,7b4,7b4-2048", help=f"graph rows, of {', '.join(ROWS)} (or none)")
    parser.add_argument("--train-rows", default="small,7b4", help=f"training rows, of {', '.join(TRAIN_ROWS)} (or none)")
    parser.add_argument("--step-rows", default="small,7b4", help=f"AdamW step rows, of {', '.join(STEP_ROWS)} (or none)")
    parser.add_argument("--no-train", action="store_true")
    parser.add_argument("--no-decode", action="store_true")
    parser.add_argument("--no-dp", action="store_true")
    parser.add_argument("--dp-row", default="small", choices=list(TRAIN_ROWS))
    parser.add_argument("--dp-devices", default="1,2,4")
    parser.add_argument("--dp-batch", type=int, default=8, help="sequences per device")
    parser.add_argument("--no-iree", action="store_true")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes on the CPU (checks the script, not speed)")
    parser.add_argument("--profile", action="store_true", help="profile 10 calls of every cell: kernels, GPU busy time")
    parser.add_argument("--torch-compile", action="store_true", help="run torch.compile in a --smoke run too")
    parser.add_argument("--json", metavar="PATH", help="write the results here")
    parser.add_argument(
        "--iree-compile-only", metavar="SM", help="compile the IREE CUDA modules of the chosen rows for this GPU "
        "(e.g. sm_90) into RLX_IREE_CACHE_DIR and exit"
    )
    parser.add_argument("--render", nargs="+", metavar="JSON", help="print the tables of saved runs and exit")
    args = parser.parse_args(argv)
    if args.render:
        print(render([json.loads(Path(p).read_text()) for p in args.render]))
        return 0
    env = Env("cpu" if args.smoke else "gpu", args.warmup, args.repeat, args.torch_compile, not args.no_iree, args.profile)
    if args.smoke:
        env.warmup, env.repeat = min(env.warmup, 1), min(env.repeat, 3)
    rows, train_rows = (SMOKE_ROWS, SMOKE_TRAIN_ROWS) if args.smoke else (ROWS, TRAIN_ROWS)
    step_rows = SMOKE_STEP_ROWS if args.smoke else STEP_ROWS
    forward_names = picked(parser, args.rows, rows)
    train_names = [] if args.no_train else picked(parser, args.train_rows, train_rows)
    step_names = [] if args.no_train else picked(parser, args.step_rows, step_rows)
    if args.iree_compile_only:
        return iree_compile_only(
            {n: rows[n] for n in forward_names}, {n: train_rows[n] for n in train_names}, args.iree_compile_only
        )
    result = {"machine": machine(env), "versions": versions(), "warmup": env.warmup, "repeat": env.repeat,
              "smoke": args.smoke, "forward": [], "train": [], "step": [], "decode": [], "dp": []}  # fmt: skip
    for name in forward_names:
        result["forward"].append(forward_row(name, rows[name], env))
    for name in train_names:
        result["train"].append(train_row(name, train_rows[name], env))
    for name in step_names:
        result["step"].append(step_row(name, step_rows[name], env))
    if not args.no_decode:
        config, pos = (SMOKE_DECODE_ROW, SMOKE_DECODE_POS) if args.smoke else (DECODE_ROW, DECODE_POS)
        result["decode"].append(decode_row(config, pos, env))
    if not args.no_dp:
        counts = [int(n) for n in args.dp_devices.split(",")]
        result["dp"] = dp_rows(train_rows[args.dp_row], counts, args.dp_batch if not args.smoke else 2, env)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    print(render([result]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
