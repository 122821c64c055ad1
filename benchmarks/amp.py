"""AMP benchmark: what each `rlx-amp` policy costs in accuracy, casts and activation memory.

    python benchmarks/amp.py [--layers 2] [--seed 0]

Two workloads run through the reference interpreter, first as written (f32),
then after `rlx-amp` under every policy (f16 through numpy, bf16 through
ml_dtypes; half-precision reductions accumulate in f32, as the kernels do):

* `llama`: `build_llama(N, vocab=...)`, an N-layer decoder ending in logits;
* `mlp`: a two-layer MLP (GELU) whose logits feed a softmax cross-entropy
  with integer labels; outputs are the logits and the mean loss.

For each workload, policy and output it prints:

* max rel err  = max|amp - f32| / max|f32| (the worst element, relative to the output's scale);
* mean rel err = mean|amp - f32| / mean|f32|;
* casts        = `mir.cast` ops the pass inserted (RLX's "cast tax"), and how many of
  them convert a function argument (weights, which a runtime would convert once);
* act bytes    = the bytes of every op result in the function (arguments excluded),
  relative to the f32 graph: what the activations would occupy; then the same
  without the casts of arguments.

Nothing here asserts; the numbers are for reading (see README.md).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, TensorType
from xdsl.ir import BlockArgument, Operation

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.elementwise import CastOp
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.transforms.amp.mixed_precision import POLICY_NAMES, AutoMixedPrecisionPass

LLAMA = {"batch": 2, "seq": 16, "dim": 64, "n_heads": 4, "n_kv_heads": 2, "ffn": 128, "vocab": 128}
MLP = {"batch": 32, "features": 64, "hidden": 128, "classes": 10}


# Workloads -------------------------------------------------------------------------


def build_mlp(batch: int, features: int, hidden: int, classes: int) -> ModuleOp:
    """`loss = mean(sce(gelu(x w1 + b1) w2 + b2, labels))`; outputs the logits and the loss."""
    b = GraphBuilder("mlp")
    x = b.input("x", [batch, features])
    labels = b.input("labels", [batch], "i64")
    h = b.gelu(b.add(b.matmul(x, b.param("w1", [features, hidden])), b.param("b1", [hidden])))
    logits = b.add(b.matmul(h, b.param("w2", [hidden, classes])), b.param("b2", [classes]))
    loss = b.reduce(b.softmax_cross_entropy_with_logits(logits, labels), kind="mean", axes=[0])
    b.output(logits, loss)
    return b.module()


def initial_values(module: ModuleOp, rng: np.random.Generator, classes: int | None = None) -> list[np.ndarray]:
    """Inputs ~ N(0, 1), weight matrices ~ N(0, 1/fan_in), norm gains near 1, biases near 0, labels in range."""
    values = []
    for arg in graph_args(find_function(module)):
        shape = tuple(arg.type.get_shape())
        numpy_dtype = dtypes.numpy_dtype(arg.type.element_type)
        if numpy_dtype.kind == "i":
            values.append(rng.integers(0, classes, size=shape).astype(numpy_dtype))
        elif arg.is_param and len(shape) == 2:
            values.append((rng.standard_normal(shape) / np.sqrt(shape[0])).astype(numpy_dtype))
        elif arg.is_param:
            base = 1.0 if arg.name.endswith("gamma") else 0.0
            values.append((base + 0.1 * rng.standard_normal(shape)).astype(numpy_dtype))
        else:
            values.append(rng.standard_normal(shape).astype(numpy_dtype))
    return values


def workloads(layers: int, seed: int) -> list[tuple[str, str, list[np.ndarray]]]:
    """`(name, module text, inputs)` for each workload."""
    rng = np.random.default_rng(seed)
    llama = build_llama(layers, **LLAMA)
    llama_inputs = initial_values(llama, rng)
    head_dim = LLAMA["dim"] // LLAMA["n_heads"]
    llama_inputs[1], llama_inputs[2] = rope_tables(LLAMA["seq"], head_dim)
    mlp = build_mlp(**MLP)
    return [
        (f"llama ({layers} layers)", str(llama), llama_inputs),
        ("mlp + sce", str(mlp), initial_values(mlp, rng, MLP["classes"])),
    ]


# Measurements ------------------------------------------------------------------------


def casts_an_argument(op: Operation) -> bool:
    return isinstance(op, CastOp) and isinstance(op.input, BlockArgument)


def activation_bytes(module: ModuleOp, *, argument_casts: bool = True) -> int:
    """Bytes of every tensor an op of the function produces (arguments excluded)."""
    total = 0
    for op in find_function(module).walk():
        if not argument_casts and casts_an_argument(op):
            continue
        for result in op.results:
            t = result.type
            if isinstance(t, TensorType):
                total += int(np.prod(t.get_shape())) * dtypes.dtype_of(t.element_type).nbytes
    return total


def cast_counts(module: ModuleOp) -> tuple[int, int]:
    """(casts, casts of function arguments)."""
    casts = [op for op in module.walk() if isinstance(op, CastOp)]
    return len(casts), sum(1 for op in casts if casts_an_argument(op))


def relative_errors(got: np.ndarray, want: np.ndarray) -> tuple[float, float]:
    """(max|got - want| / max|want|, mean|got - want| / mean|want|), in f64."""
    g, w = got.astype(np.float64), want.astype(np.float64)
    diff = np.abs(g - w)
    return float(diff.max() / np.abs(w).max()), float(diff.mean() / np.abs(w).mean())


POLICIES: list[tuple[str, dict]] = [
    *((name, {"policy": name}) for name in POLICY_NAMES if name != "custom"),
    ("custom compute=f16 (rest f32)", {"policy": "custom", "compute": "f16"}),
    ("torch-cuda low=bf16", {"policy": "torch-cuda", "low": "bf16"}),
]
"""Every policy (custom with one class set: alone it is all f32), and CUDA autocast in bf16."""


def measure(text: str, inputs: list[np.ndarray]) -> list[dict]:
    """One row per policy and output."""
    reference_module = parse_module(text)
    reference = run_function(reference_module, None, inputs)
    base_bytes = activation_bytes(reference_module)
    rows = []
    for label, options in POLICIES:
        module = parse_module(text)
        AutoMixedPrecisionPass(**options).apply(Context(), module)
        module.verify()
        outputs = run_function(module, None, inputs)
        casts, argument_casts = cast_counts(module)
        for index, (got, want) in enumerate(zip(outputs, reference, strict=True)):
            worst, mean = relative_errors(got, want)
            rows.append(
                {
                    "policy": label,
                    "output": index,
                    "max": worst,
                    "mean": mean,
                    "casts": f"{casts} ({argument_casts})",
                    "bytes": activation_bytes(module) / base_bytes,
                    "bytes_computed": activation_bytes(module, argument_casts=False) / base_bytes,
                }
            )
    return rows


def table(name: str, rows: list[dict]) -> list[str]:
    lines = [
        f"### {name}",
        "",
        "| policy | output | max rel err | mean rel err | casts (of args) | act bytes | without arg casts |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['policy']} | {r['output']} | {r['max']:.2e} | {r['mean']:.2e} | {r['casts']} "
            f"| {r['bytes']:.2f} | {r['bytes_computed']:.2f} |"
        )
    return [*lines, ""]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(
        description="Accuracy, casts and activation bytes of every rlx-amp policy."
    )
    parser.add_argument("--layers", type=int, default=2, help="LLaMA decoder layers (default 2)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the inputs and weights (default 0)")
    args = parser.parse_args(argv)
    if args.layers < 1:
        parser.error("--layers must be at least 1")
    llama = ", ".join(f"{k}={v}" for k, v in LLAMA.items())
    mlp = ", ".join(f"{k}={v}" for k, v in MLP.items())
    lines = [f"# llama: {llama}; mlp: {mlp}; seed {args.seed}", ""]
    for name, text, inputs in workloads(args.layers, args.seed):
        print(f"measuring {name}...", file=sys.stderr)
        lines += table(name, measure(text, inputs))
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
