"""Importing PyTorch models: import time, MIR size, kernels after fusion, and run time against PyTorch eager.

    python benchmarks/import.py
    python benchmarks/import.py --repeat 50

For each small plain-torch model of the importer tests (`tests/importers/models.py`: an
MLP, a conv net with batch norm and pooling, a LLaMA-like decoder layer) and each tiny
Hugging Face model of `tests/importers/hf_models.py` (one layer, hidden 32, 2 x 8 tokens
or a 2 x 3 x 8 x 8 image / 2 x 8 x 8 mel frames), one process:

* `import`: `rlx_xdsl.importers.torch.import_module(model, (x,))` (`torch.export`, the
  decomposition to core ATen, the translation to MIR), static shapes, best of `--imports`;
* `MIR ops`: the ops of the imported function (its `func.return` excluded);
* `kernels`: `rlx_xdsl.transforms.fusion.metrics.kernel_stats` after
  `rlx-fusion-pipeline{target=best}` (views, constants and weight-only ops are not kernels),
  and before it for comparison;
* run time of the imported module on the numpy interpreter and on IREE CPU (`IreeModule`,
  compile time apart), against the model itself in PyTorch eager (`torch.no_grad`),
  each the median of `--repeat` calls after a warm-up (`execution.py`'s `timed`); the
  error column is the largest difference from PyTorch relative to the output's magnitude.

Benchmark-only dependencies: `pip install torch transformers`. Nothing asserts on timings.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(Path(__file__).parent), str(ROOT)]
from execution import log, relative_error, timed  # noqa: E402

from rlx_xdsl.backends import iree as iree_backend  # noqa: E402
from rlx_xdsl.context import make_context  # noqa: E402
from rlx_xdsl.importers.torch import import_module  # noqa: E402
from rlx_xdsl.ir.graph import argument_name, find_function, is_param  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.transforms.fusion.metrics import kernel_stats  # noqa: E402
from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass  # noqa: E402
from tests.importers import hf_models  # noqa: E402
from tests.importers.models import MLP, ConvNet, LlamaBlock  # noqa: E402

MODELS = [
    ("MLP", lambda: (MLP(), torch.randn(32, 6))),
    ("ConvNet", lambda: (ConvNet(), torch.randn(4, 3, 16, 16))),
    ("LlamaBlock", lambda: (LlamaBlock(), torch.randn(2, 16, 16))),
    *((f"HF {name}", factory) for name, factory in hf_models.MODELS.items()),
]
"""(name, factory returning the model and its input); the models' own dims are those of the importer tests."""


def arguments(model, module, x: torch.Tensor) -> list[np.ndarray]:
    """The imported function's arguments: the model's weights by `rlx.name`, then `x`."""
    table = {k: v.detach().numpy() for k, v in [*model.named_parameters(), *model.named_buffers()]}
    f = find_function(module)
    return [table[argument_name(f, i)] if is_param(f, i) else x.numpy() for i in range(len(f.args))]


def measure(name: str, factory, repeat: int, imports: int) -> tuple:
    torch.manual_seed(0)
    model, x = factory()
    model.eval()
    shape = tuple(x.shape)
    log(f"{name}: importing ...")
    import_s = float("inf")
    for _ in range(imports):
        start = time.perf_counter()
        module = import_module(model, (x,))
        import_s = min(import_s, time.perf_counter() - start)
    f = find_function(module)
    mir_ops = len(list(f.body.block.ops)) - 1
    unfused = kernel_stats(module).kernels
    fused = module.clone()
    FusionPipelinePass(target="best").apply(make_context(), fused)
    fused_kernels = kernel_stats(fused).kernels

    args = arguments(model, module, x)
    with torch.no_grad():
        eager_s, expected = timed(lambda: model(x), repeat)
    expected = expected.numpy().astype(np.float64)
    log(f"{name}: interpreter ...")
    interp_s, (got,) = timed(lambda: run_function(module, f.sym_name.data, args), repeat)
    interp_error = relative_error(got, expected)
    log(f"{name}: IREE lowering and compiling ...")
    start = time.perf_counter()
    compiled = iree_backend.IreeModule(module)
    compile_s = time.perf_counter() - start
    iree_s, (got,) = timed(lambda: compiled.run(f.sym_name.data, args), repeat)
    iree_error = relative_error(got, expected)
    return (name, shape, import_s, mir_ops, unfused, fused_kernels, eager_s, interp_s, iree_s,
            max(interp_error, iree_error), compile_s)  # fmt: skip


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--imports", type=int, default=3, help="import each model this many times, keep the best")
    parser.add_argument("--models", nargs="*", help="only these models (by name, e.g. 'HF llama')")
    args = parser.parse_args(argv)
    only = set(args.models or [])
    rows = [measure(name, factory, args.repeat, args.imports) for name, factory in MODELS if not only or name in only]
    print(f"# median of {args.repeat} calls, import best of {args.imports}; torch {torch.__version__} "
          f"({torch.get_num_threads()} threads); Python {platform.python_version()}, "
          f"{platform.machine()}\n")  # fmt: skip
    print("| model | input | import (s) | MIR ops | kernels unfused | kernels `target=best` | PyTorch eager (ms) "
          "| interpreter (ms) | IREE CPU (ms) | max rel. error vs PyTorch | IREE compile (s) |")  # fmt: skip
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for name, shape, import_s, ops, unfused, fused, eager_s, interp_s, iree_s, error, compile_s in rows:
        print(f"| {name} | {'x'.join(map(str, shape))} | {import_s:.3f} | {ops} | {unfused} | {fused} | "
              f"{eager_s * 1e3:.3f} | {interp_s * 1e3:.3f} ({interp_s / eager_s:.2f}x) | "
              f"{iree_s * 1e3:.3f} ({iree_s / eager_s:.2f}x) | {error:.1e} | {compile_s:.2f} |")  # fmt: skip


if __name__ == "__main__":
    main()
