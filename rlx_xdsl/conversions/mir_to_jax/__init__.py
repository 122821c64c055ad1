"""MIR as JAX programs: one `jax.numpy`/`jax.lax` formula per op class.

`registry.py` holds `JAX_OPS`, the helpers formulas share and `jax_function`;
each other module registers the formulas of one MIR group. Tracing a function
with `jax.jit` gives the StableHLO that the XLA backend compiles; the same
translation is the test oracle of the autodiff and batching passes.
`jax` is an optional dependency (the `xla` and `test` extras).
"""

from rlx_xdsl.conversions.mir_to_jax.registry import JAX_OPS, BlockRunner, jax_function, run_block

__all__ = ["JAX_OPS", "BlockRunner", "jax_function", "run_block"]
