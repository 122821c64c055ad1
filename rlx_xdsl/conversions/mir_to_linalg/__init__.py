"""`rlx-convert-mir-to-linalg`: MIR to upstream MLIR (func, arith, math, tensor, linalg, scf).

`lowering.py` holds the pass, the `LOWERINGS` registry and what a rule receives;
`tensors.py` and `scalars.py` build the upstream ops; each other module
registers the rules of one MIR group. The result runs on any MLIR-based
compiler; `rlx_xdsl.backends.iree` compiles and runs it with IREE.
"""

from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    ConvertMirToLinalgPass,
    Lowering,
    LoweringError,
    lower_module,
)

__all__ = [
    "LOWERINGS",
    "ConvertMirToLinalgPass",
    "Lowering",
    "LoweringError",
    "lower_module",
]
