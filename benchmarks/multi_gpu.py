"""Sharded training on several GPUs of one host (issue 38): the LLaMA bf16 AdamW train step,
data-parallel, FSDP (ZeRO-3) and 2-D (Megatron x FSDP) through XLA, against PyTorch FSDP2
(`torch.distributed.fsdp.fully_shard`) on the same machine.

    python benchmarks/multi_gpu.py --devices 1,4,8                 # the 7b4 row on 1, 4, 8 GPUs
    python benchmarks/multi_gpu.py --row 7b32 --devices 4 --layouts fsdp   # too large for one GPU
    python benchmarks/multi_gpu.py --json out.json
    python benchmarks/multi_gpu.py --smoke                          # tiny sizes on 8 host CPU devices

Ours is `@llama_train_step` of `rlx_xdsl/testing/sharded_training.py` (the graphs the 8-device
CPU tests check against one device): `rlx-prepare-ad`, the layout's shardings
(`rlx-shard-params{axis=data}` for FSDP, Megatron's column/row split over `model` for 2-D),
`rlx-train-step{func=llama}` (AdamW), `rlx-amp{policy=torch-cuda low=bf16}`: f32 master
weights and AdamW state, bf16 matmuls. The updated parameters and state are fed back as they
come (resident, in their shardings). `--batch` is sequences per data-parallel replica, so a
step processes `batch x data x seq` tokens.

PyTorch FSDP2 runs one process per GPU (`torch.multiprocessing`, NCCL; gloo on the CPU smoke
run): the same model written in PyTorch (`rlx_xdsl/testing/llama_reference.py`), each layer
and the root `fully_shard`-ed, `torch.autocast(bfloat16)`, `AdamW` (fused on CUDA), the batch
split over the ranks.

Per layout and device count: tokens per second (median step), the speed-up over ours on one
device, and the memory per device: for ours XLA's planned bytes (arguments + outputs +
temporaries from the compiled program's memory analysis; the allocator's peak would span every
layout run in one process), for PyTorch `torch.cuda.max_memory_allocated` of its own process. Nothing asserts on times;
a cell that fails says why.
"""

from __future__ import annotations

import os
import sys

if "--smoke" in sys.argv and "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip()
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import argparse
import json
import statistics
import time
from dataclasses import asdict, replace

import numpy as np

from rlx_xdsl.testing.llama_reference import (
    LlamaConfig,
    init_inputs,
    init_params,
    labels,
    torch_llama,
)

ROWS = {
    "7b4": LlamaConfig(4, batch=1, seq=512, dim=4096, n_heads=32, n_kv_heads=8, ffn=11008, vocab=32000),
    "7b32": LlamaConfig(32, batch=1, seq=512, dim=4096, n_heads=32, n_kv_heads=8, ffn=11008, vocab=32000),
}
"""7b4: four layers of LLaMA-7B's shapes (`benchmarks/gpu.py`'s row); 7b32: 32 of them, about
6.7e9 parameters, 107 GB of f32 weights and AdamW state: more than one H200 holds."""
SMOKE_ROW = LlamaConfig(2, batch=2, seq=8, dim=32, n_heads=4, n_kv_heads=2, ffn=64, vocab=64)
LAYOUTS = ("dp", "fsdp", "2d")
LR = 1e-4


def ours(config: LlamaConfig, layout: str, devices: int, model_axis: int, device: str, warmup: int, repeat: int) -> dict:
    """Our sharded AdamW step: tokens/s and per-device memory."""
    import jax

    from rlx_xdsl.backends.xla import XlaModule
    from rlx_xdsl.ir.graph import graph_args
    from rlx_xdsl.testing.sharded_training import build_train_step, initial_values

    data = devices // model_axis if layout == "2d" else devices
    global_config = replace(config, batch=config.batch * data)
    name = "single" if devices == 1 else layout
    module = build_train_step(
        name, devices, n_layers=config.layers, model_axis=model_axis, lr=LR, amp=True,
        vocab=config.vocab, **global_config.dims(),
    )  # fmt: skip
    compiled = XlaModule(module, device=device, function="llama_train_step")
    values = initial_values(module)
    args = graph_args(compiled.function)
    updated = [a.index for a in args if a.is_param] + [a.index for a in args if a.name.startswith(("m_", "v_"))]
    step_index = next(a.index for a in args if a.name == "step")
    times = []
    for call in range(max(warmup, 1) + repeat):  # the first call places the numpy values
        values[step_index] = np.float32(call + 1)
        start = time.perf_counter()
        results = compiled(*values)
        jax.block_until_ready(results)
        if call >= max(warmup, 1):
            times.append(time.perf_counter() - start)
        for index, value in zip(updated, results[1:], strict=True):
            values[index] = value
    median = statistics.median(times)
    memory = compiled._compiled_last()[1].memory_analysis()
    planned = memory.argument_size_in_bytes + memory.output_size_in_bytes + memory.temp_size_in_bytes
    return {
        "tokens_per_s": global_config.batch * config.seq / median,
        "step_ms": median * 1e3,
        "peak_bytes": None,  # the allocator's peak spans every layout run in this process
        "planned_bytes": planned,
        "loss": float(np.asarray(results[0])),
    }


# PyTorch FSDP2 ------------------------------------------------------------------------


def _torch_worker(rank: int, world: int, port: int, config: LlamaConfig, device: str, warmup: int, repeat: int, out):
    import torch
    import torch.distributed as dist
    import torch.nn.functional as F
    from torch import nn
    from torch.distributed.fsdp import fully_shard

    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    dist.init_process_group("nccl" if device == "gpu" else "gloo", rank=rank, world_size=world)
    dev = torch.device(f"cuda:{rank}") if device == "gpu" else torch.device("cpu")
    if device == "gpu":
        torch.cuda.set_device(dev)
    params = init_params(config)
    inputs = {k: torch.from_numpy(v).to(dev) for k, v in init_inputs(config).items()}
    target = torch.from_numpy(labels(config)).to(dev)

    class Part(nn.Module):
        """Some of the model's parameters (keys without dots) and the sub-model that reads them."""

        def __init__(self, names: dict[str, str], sub: LlamaConfig):
            super().__init__()
            self.names, self.sub = names, sub
            self.p = nn.ParameterDict({k: nn.Parameter(torch.from_numpy(params[v]).to(dev)) for k, v in names.items()})

        def forward(self, x):
            own = {v_sub: self.p[k] for k, v_sub in self.names_sub.items()}
            return torch_llama(own, x, inputs["cos"], inputs["sin"], self.sub)

    layers = []
    for i in range(config.layers):
        names = {k.replace(".", "_"): f"layers.{i}.{k}" for k in _layer_keys()}
        part = Part(names, replace(config, layers=1, vocab=None))
        part.names_sub = {k: f"layers.0.{v.split('.', 2)[2]}" for k, v in names.items()}
        layers.append(part)
    head = Part({"norm_gamma": "norm.gamma", "norm_beta": "norm.beta", "lm_head": "lm_head"}, replace(config, layers=0))
    head.names_sub = {"norm_gamma": "norm.gamma", "norm_beta": "norm.beta", "lm_head": "lm_head"}
    class Model(nn.Module):
        def __init__(self):
            super().__init__()
            self.parts = nn.ModuleList([*layers, head])

        def forward(self, x):
            for part in self.parts:
                x = part(x)
            return F.cross_entropy(x.reshape(-1, config.vocab).float(), target)

    model = Model()
    for part in model.parts:
        fully_shard(part)
    fully_shard(model)
    optimizer = torch.optim.AdamW(model.parameters(), lr=LR, fused=device == "gpu")
    x = inputs["x"]

    def step():
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = model(x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        return loss

    times = []
    for call in range(warmup + repeat):
        dist.barrier()
        start = time.perf_counter()
        loss = step()
        if device == "gpu":
            torch.cuda.synchronize()
        dist.barrier()
        if call >= warmup:
            times.append(time.perf_counter() - start)
    if rank == 0:
        peak = torch.cuda.max_memory_allocated(dev) if device == "gpu" else None
        median = statistics.median(times)
        out.put({"tokens_per_s": world * config.batch * config.seq / median, "step_ms": median * 1e3,
                 "peak_bytes": peak, "loss": float(loss.detach())})  # fmt: skip
    dist.destroy_process_group()


def _layer_keys():
    from rlx_xdsl.testing.llama_reference import LAYER_PARAMS

    return LAYER_PARAMS


def torch_fsdp2(config: LlamaConfig, devices: int, device: str, warmup: int, repeat: int) -> dict:
    """PyTorch FSDP2 on `devices` processes (each `config.batch` sequences)."""
    import socket

    import torch.multiprocessing as mp

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    context = mp.get_context("spawn")
    out = context.Queue()
    mp.start_processes(
        _torch_worker, args=(devices, port, config, device, warmup, repeat, out), nprocs=devices, start_method="spawn"
    )
    return out.get()


# The table ------------------------------------------------------------------------------


def cell(fn, *args) -> dict:
    try:
        return fn(*args)
    except Exception as e:  # noqa: BLE001 -- a failing cell says why; the run goes on
        return {"error": f"{type(e).__name__}: {str(e).strip().splitlines()[0] if str(e).strip() else ''}"}


def render(rows: list[dict]) -> str:
    base = next((r["tokens_per_s"] for r in rows if r["devices"] == 1 and "tokens_per_s" in r), None)
    lines = [
        "| engine | layout | devices | tokens/s | vs ours on 1 device | peak memory per device |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for r in rows:
        if "error" in r:
            lines.append(f"| {r['engine']} | {r['layout']} | {r['devices']} | {r['error']} | | |")
            continue
        speedup = f"{r['tokens_per_s'] / base:.2f}x" if base else ""
        memory = r.get("peak_bytes") or r.get("planned_bytes")
        memory_text = "" if memory is None else f"{memory / 2**20:,.2f} MiB" + ("" if r.get("peak_bytes") else " (planned)")
        lines.append(
            f"| {r['engine']} | {r['layout']} | {r['devices']} | {r['tokens_per_s']:,.0f} | {speedup} | {memory_text} |"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--row", default="7b4", choices=list(ROWS))
    parser.add_argument("--devices", default="1,4", help="device counts (1: ours on one device, no mesh)")
    parser.add_argument("--layouts", default=",".join(LAYOUTS), help=f"of {', '.join(LAYOUTS)}")
    parser.add_argument("--model-axis", type=int, default=2, help="the 2-D mesh's model axis size")
    parser.add_argument("--batch", type=int, default=8, help="sequences per data-parallel replica")
    parser.add_argument("--no-torch", action="store_true")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--repeat", type=int, default=10)
    parser.add_argument("--smoke", action="store_true", help="tiny sizes on 8 host CPU devices (checks the script)")
    parser.add_argument("--json", metavar="PATH")
    args = parser.parse_args(argv)
    device = "cpu" if args.smoke else "gpu"
    config = replace(SMOKE_ROW if args.smoke else ROWS[args.row], batch=args.batch)
    if args.smoke:
        args.warmup, args.repeat = 1, 2
    rows = []
    for n in [int(d) for d in args.devices.split(",")]:
        layouts = ["single"] if n == 1 else args.layouts.split(",")
        for layout in layouts:
            result = cell(ours, config, layout, n, args.model_axis, device, args.warmup, args.repeat)
            rows.append({"engine": "ours (XLA)", "layout": layout, "devices": n, **result})
            print(render(rows[-1:]).splitlines()[-1], flush=True)
        if not args.no_torch and n > 1:
            result = cell(torch_fsdp2, config, n, device, args.warmup, args.repeat)
            rows.append({"engine": "PyTorch FSDP2", "layout": "fsdp", "devices": n, **result})
            print(render(rows[-1:]).splitlines()[-1], flush=True)
    print(f"\n{args.row if not args.smoke else 'smoke'}: {asdict(config)}\n")
    print(render(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"config": asdict(config), "device": device, "rows": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
