"""Sharded training steps of the LLaMA training graph on the XLA backend: the layouts
(data-parallel, FSDP, 2-D Megatron) and a loop of AdamW steps that keeps everything resident.

Shared by the 8-device CPU tests (`tests/backends/sharded_training_run.py`) and
`benchmarks/multi_gpu.py`, so both run the same graphs:

* `dp`: the batch split over `data`, every parameter and its AdamW state replicated
  (XLA all-reduces the gradients);
* `fsdp`: the batch split over `data`, and `rlx-shard-params{axis=data}` on every
  parameter: ZeRO-3 (XLA all-gathers a parameter for the forward and reduce-scatters
  its gradient; each device keeps 1/N of the parameters and AdamW state);
* `2d`: the mesh `{data = D, model = M}`: the batch over `data`, the Megatron-LM layout over
  `model` (`wq`/`wk`/`wv`/`w_gate`/`w_up` by columns, `wo`/`w_down` by rows), and FSDP of
  what is left over `data` (`rlx-shard-params{axis=data}`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.autodiff.train_step import TrainStepPass
from rlx_xdsl.context import make_context
from rlx_xdsl.ir.graph import find_function, graph_args, random_inputs
from rlx_xdsl.ir.sharding import annotate
from rlx_xdsl.testing.llama import rope_tables
from rlx_xdsl.testing.training import build_llama_loss
from rlx_xdsl.transforms.amp import AutoMixedPrecisionPass
from rlx_xdsl.transforms.decompose_backward import DecomposeBackwardPass
from rlx_xdsl.transforms.lower_sce import LowerSoftmaxCrossEntropyPass
from rlx_xdsl.transforms.shard_params import shard_params

LAYOUTS = ("single", "dp", "fsdp", "2d")
COLUMNS = ("wq", "wk", "wv", "w_gate", "w_up")
"""Megatron's column-parallel weights (the output features split: attention heads, FFN columns)."""
ROWS = ("wo", "w_down")
"""Megatron's row-parallel weights (the input features split; each block ends in one all-reduce)."""


def megatron(names: Sequence[str]) -> dict[str, list]:
    """The Megatron-LM shardings over `model` of the LLaMA weights among `names`."""
    split: dict[str, list] = {}
    for name in names:
        last = name.rsplit(".", 1)[-1]
        if last in COLUMNS:
            split[name] = [None, "model"]
        elif last in ROWS:
            split[name] = ["model", None]
    return split


def build_train_step(
    layout: str,
    devices: int,
    n_layers: int = 1,
    model_axis: int = 2,
    lr: float = 1e-2,
    amp: bool = False,
    **dims: Any,
) -> ModuleOp:
    """The LLaMA training graph with `@llama_train_step` (AdamW), sharded as `layout` over
    `devices` devices (`2d`: `data = devices / model_axis`, `model = model_axis`).
    `dims` are `build_llama_loss`'s (batch, seq, dim, n_heads, n_kv_heads, ffn, vocab).
    `amp`: bf16 matmuls, f32 parameters, state and update (`rlx-amp{policy=torch-cuda low=bf16}`)."""
    if layout not in LAYOUTS:
        raise ValueError(f"unknown layout '{layout}' (known: {', '.join(LAYOUTS)})")
    module = build_llama_loss(n_layers, **dims)
    prepare_for_ad(module)
    f = find_function(module, "llama")
    names = [a.name for a in graph_args(f)]
    batch = {"x": ["data", None, None]}
    if layout in ("dp", "fsdp"):
        annotate(module, f, {"data": devices}, batch)
    elif layout == "2d":
        if devices % model_axis:
            raise ValueError(f"2d: {devices} devices do not split into model={model_axis}")
        annotate(module, f, {"data": devices // model_axis, "model": model_axis}, batch | megatron(names))
    if layout in ("fsdp", "2d"):
        shard_params(module, "data", 0)
    ctx = make_context()
    TrainStepPass(func="llama", lr=lr).apply(ctx, module)
    if amp:
        AutoMixedPrecisionPass(policy="torch-cuda", low="bf16").apply(ctx, module)
    LowerSoftmaxCrossEntropyPass().apply(ctx, module)
    DecomposeBackwardPass().apply(ctx, module)
    return module


def initial_values(module: ModuleOp, seed: int = 0) -> list[np.ndarray]:
    """Arguments for `@llama_train_step`: random input and weights (norm gains near one,
    real RoPE tables), zero AdamW state, step 1."""
    f = find_function(module, "llama_train_step")
    values = random_inputs(f, seed)
    args = graph_args(f)
    seq, half = next(a.type.get_shape() for a in args if a.name == "cos")
    for i, arg in enumerate(args):
        if arg.name in ("cos", "sin"):
            values[i] = rope_tables(seq, 2 * half)[arg.name == "sin"]
        elif arg.name.endswith("gamma"):
            values[i] = (1.0 + 0.1 * values[i]).astype(np.float32)
        elif arg.is_param:
            values[i] = (0.3 * values[i]).astype(np.float32)
        elif arg.name.startswith(("m_", "v_")):
            values[i] = np.zeros_like(values[i])
        elif arg.name == "step":
            values[i] = np.float32(1)
    return values


def run_steps(compiled: Any, values: Sequence[Any], steps: int) -> tuple[list[float], list[Any], list[Any]]:
    """`steps` AdamW steps of the `XlaModule` of `@llama_train_step`, each step's updated
    parameters and state fed back as they come (resident, in their shardings). Returns the
    losses, the arguments of the last step and the results of the last step."""
    args = graph_args(compiled.function)
    updated = [a.index for a in args if a.is_param] + [a.index for a in args if a.name.startswith(("m_", "v_"))]
    step_index = next(a.index for a in args if a.name == "step")
    values = list(values)
    losses = []
    results: tuple = ()
    for step in range(1, steps + 1):
        values[step_index] = np.float32(step)
        results = compiled(*values)
        losses.append(float(np.asarray(results[0])))
        if step < steps:
            for index, value in zip(updated, results[1:], strict=True):
                values[index] = value
    return losses, values, list(results)
