"""Checking `rlx-vmap` against its definition: `f_vmap(X)[i] == f(X[i])` through the interpreter.

The oracle is independent of the batching rules: it runs the unbatched function once per
example and stacks the results.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.batching.vmap import build_vmap
from rlx_xdsl.run import run_function


def single_function_module(f: func.FuncOp) -> ModuleOp:
    return ModuleOp([f.clone()])


def stacked_reference(
    module: ModuleOp, name: str, examples: Sequence[Sequence[np.ndarray]]
) -> list[np.ndarray]:
    """Each output of `@name` run on every example, stacked along a new leading axis."""
    per_example = [run_function(module, name, inputs) for inputs in examples]
    return [np.stack([outs[k] for outs in per_example]) for k in range(len(per_example[0]))]


def batch_inputs(examples: Sequence[Sequence[np.ndarray]], batched: Sequence[int]) -> list[np.ndarray]:
    """The batched function's inputs: batched arguments stacked, the others from example 0
    (which is why every example must share them: `examples` give them equal)."""
    return [np.stack([ex[i] for ex in examples]) if i in batched else examples[0][i] for i in range(len(examples[0]))]


def check_vmap(
    module: ModuleOp, name: str, examples: Sequence[Sequence[np.ndarray]], batched: Sequence[int],
    rtol: float = 1e-5, atol: float = 1e-6,
) -> None:  # fmt: skip
    """Add `@name_vmap` batching `batched` and compare it with the stacked per-example runs.
    Unbatched arguments take example 0's values in every example."""
    examples = [[ex[i] if i in batched else examples[0][i] for i in range(len(ex))] for ex in examples]
    build_vmap(module, name, [str(i) for i in batched], len(examples))
    module.verify()
    expected = stacked_reference(module, name, examples)
    got = run_function(module, f"{name}_vmap", batch_inputs(examples, batched))
    assert len(got) == len(expected)
    for k, (g, x) in enumerate(zip(got, expected, strict=True)):
        assert g.shape == x.shape and g.dtype == x.dtype, (k, g.shape, x.shape, g.dtype, x.dtype)
        if np.issubdtype(x.dtype, np.integer) or x.dtype == np.bool_:
            np.testing.assert_array_equal(g, x, err_msg=f"result #{k}")
        else:
            np.testing.assert_allclose(
                np.asarray(g, np.complex128 if np.iscomplexobj(g) else np.float64),
                np.asarray(x, np.complex128 if np.iscomplexobj(x) else np.float64),
                rtol=rtol, atol=atol, equal_nan=True, err_msg=f"result #{k}",
            )  # fmt: skip
