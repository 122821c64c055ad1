"""Reference gradients of MIR functions from `jax.vjp`: an independent oracle for `rlx-grad`.

`jax_function(module, name)` (from `conversions.mir_to_jax`) evaluates `@name`
with `jax.numpy` formulas written from the ops' documented semantics, sharing no
code with the interpreter's kernels or with the VJP rules; `jax.vjp` of it gives
reference gradients. An op without a formula raises `MissingEntry`.

`jax` is a test-only dependency here (the `test` extra); importing this module needs it.
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
import jax.numpy as jnp
import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl import layers
from rlx_xdsl.conversions.mir_to_jax import JAX_OPS, jax_function, run_block

layers.load("jax")

__all__ = ["JAX_OPS", "jax_function", "jax_vjp", "run_block"]


def jax_vjp(module: ModuleOp, name: str, inputs: Sequence[np.ndarray], wrt: Sequence[int], cotangent):
    """`@name`'s first output, and JAX's gradients of it with respect to `inputs[wrt]`
    seeded by `cotangent`."""
    f = jax_function(module, name)

    def loss(*chosen):
        args = list(map(jnp.asarray, inputs))
        for index, value in zip(wrt, chosen):
            args[index] = value
        return f(*args)[0]

    def value_and_gradients(seed, *chosen):
        value, pullback = jax.vjp(loss, *chosen)
        return value, pullback(seed)

    # One compiled computation: eager jax compiles every primitive separately (much slower).
    value, gradients = jax.jit(value_and_gradients)(
        jnp.asarray(cotangent), *(jnp.asarray(inputs[i]) for i in wrt)
    )
    return np.asarray(value), [np.asarray(g) for g in gradients]
