"""Run by `test_xla_sharded_training.py` in its own process, with 8 host devices
(`XLA_FLAGS` is read once, when JAX starts; the test session's has 4): three AdamW steps
of the LLaMA training graph for each layout of `rlx_xdsl.testing.sharded_training`,
printed as JSON for the test to check."""

from __future__ import annotations

import json
import math

import numpy as np

from rlx_xdsl.backends.xla import XlaModule
from rlx_xdsl.dtypes import numpy_dtype
from rlx_xdsl.ir.graph import graph_args
from rlx_xdsl.testing.sharded_training import (
    LAYOUTS,
    build_train_step,
    initial_values,
    run_steps,
)

DEVICES = 8
STEPS = 3
DIMS = {"batch": 8, "vocab": 8, "seq": 4, "dim": 16, "n_heads": 4, "n_kv_heads": 2, "ffn": 32}


def main() -> None:
    import jax

    report: dict = {"devices": len(jax.devices("cpu"))}
    for layout in LAYOUTS:
        module = build_train_step(layout, DEVICES, model_axis=2, **DIMS)
        compiled = XlaModule(module, function="llama_train_step")
        losses, last_args, results = run_steps(compiled, initial_values(module), STEPS)
        args = graph_args(compiled.function)
        mesh = compiled.layout.mesh
        parts = [math.prod(mesh[axis] for dim in spec for axis in dim) if spec else 1 for spec in compiled.layout.args]
        sizes = [math.prod(a.type.get_shape()) * numpy_dtype(a.type.element_type).itemsize for a in args]
        updated = [a.index for a in args if a.is_param] + [a.index for a in args if a.name.startswith(("m_", "v_"))]
        memory = compiled._compiled_last()[1].memory_analysis()
        report[layout] = {
            "losses": losses,
            "results": [np.asarray(r).tolist() for r in results],
            "argument_bytes": memory.argument_size_in_bytes,
            "expected_argument_bytes": sum(size // n for size, n in zip(sizes, parts)),
            "parts": {a.name: n for a, n in zip(args, parts)},
            "resident": all(
                r.sharding == a.sharding for r, a in zip(results[1:], [last_args[i] for i in updated], strict=True)
            ),
            "collectives": sorted({c for c in ("all-reduce", "all-gather", "reduce-scatter") if c in compiled.compiled_text()}),
        }
    print(json.dumps(report))


if __name__ == "__main__":
    main()
