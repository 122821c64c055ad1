"""The XLA backend: MIR functions as StableHLO, compiled and run by XLA (through JAX).

    from rlx_xdsl.backends.xla import XlaModule, to_stablehlo
    text = to_stablehlo(module, "llama")           # StableHLO text (XLA and IREE read it)
    compiled = XlaModule(module, device="gpu")     # compiled once; SPMD when the module has rlx.mesh
    compiled.bind(weights)                         # parameters resident on the device(s)
    outputs = compiled(x, cos, sin)

The program is the function's `JAX_OPS` translation (`conversions/mir_to_jax`)
traced by `jax.jit`: StableHLO comes from JAX's own lowering, and XLA does the
rest (fusion, layout, its SPMD partitioner for sharded modules). JAX is an
optional dependency (`pip install -e '.[xla]'`); without it `XlaUnavailable`
says so. `export.py` checks and exports, `module.py` compiles and runs; the mesh
and the argument shardings are IR attributes (`rlx_xdsl/ir/sharding.py`).
"""

from rlx_xdsl.backends.xla.export import XlaUnavailable, check_exportable, to_stablehlo
from rlx_xdsl.backends.xla.module import DEVICES, DeviceUnavailable, XlaModule, run_function
from rlx_xdsl.ir.sharding import Layout, read_layout

__all__ = [
    "DEVICES",
    "DeviceUnavailable",
    "Layout",
    "XlaModule",
    "XlaUnavailable",
    "check_exportable",
    "read_layout",
    "run_function",
    "to_stablehlo",
]
