"""Running a function on a backend: the reference interpreter, IREE or XLA.

One small module above `interpreters/` and `backends/`, so that neither imports the other:
`rlx-run`, the tests and the Python API call `run_function`, which picks the backend.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.interpreters import interpret_function
from rlx_xdsl.ir.graph import find_function, inputs_by_name

BACKENDS = ("interpreter", "iree", "xla")


def run_function(
    module: ModuleOp,
    name: str | None,
    inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray],
    backend: str = "interpreter",
    device: str = "cpu",
) -> list[np.ndarray]:
    """Run one function on numpy inputs and return its outputs.

    `inputs` are by position, or a mapping by argument name (`rlx.name`, `argN` or the
    SSA name; see `graph.inputs_by_name`: a missing or unknown name is a `KeyError`).

    `backend="interpreter"` runs it on the numpy reference kernels
    (`interpreters.interpret_function`; a planned LIR function on its arena).
    `backend="iree"` lowers the module to upstream MLIR and runs it compiled by IREE on
    `device` ("cpu" or "cuda"; see `rlx_xdsl.backends.iree`); `backend="xla"` runs it
    compiled by XLA on `device` ("cpu" or "gpu"; see `rlx_xdsl.backends.xla`).
    Raises `ValueError` for an unknown backend.
    """
    if isinstance(inputs, Mapping):
        inputs = inputs_by_name(find_function(module, name), inputs)
    if backend == "iree":
        from rlx_xdsl.backends import iree

        return iree.run_function(module, name, inputs, device)
    if backend == "xla":
        from rlx_xdsl.backends import xla

        return xla.run_function(module, name, inputs, device)
    if backend != "interpreter":
        raise ValueError(f"unknown backend '{backend}' (known: {', '.join(BACKENDS)})")
    return interpret_function(module, name, inputs)
