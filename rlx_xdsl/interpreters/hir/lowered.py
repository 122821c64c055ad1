"""HIR semantics by construction: a block op means what its lowering computes.

`run_lowered(op, *arrays)` copies the block op into a one-op function whose
arguments have the arrays' exact types, lowers it with `rlx-lower-hir{policy=fusable}`
(primitive MIR, whose kernels are each checked against an oracle) and runs
that on the interpreter. The HIR op tests check every block against a
separately written numpy formula as well, and the lowering tests check that
`direct` computes the same.
"""

from __future__ import annotations

import numpy as np
from xdsl.context import Context
from xdsl.ir import Operation

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import RlxOperation


def run_lowered(op: Operation, *arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The block's results on `arrays`, through its `fusable` lowering."""
    from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass
    from rlx_xdsl.interpreters import interpret_function

    b = GraphBuilder("block")
    args = [
        b.input(f"in{i}", a.shape, dtypes.dtype_of_numpy(a.dtype).element_type) for i, a in enumerate(arrays)
    ]
    block = op.clone(value_mapper=dict(zip(op.operands, args)))
    assert isinstance(block, RlxOperation)
    block.refresh_result_types()  # the arrays' static shapes refine any `?` of the original
    b.insert(block)
    b.output(*block.results)
    module = b.module()
    LowerHirPass(policy="fusable").apply(Context(), module)
    return tuple(interpret_function(module, "block", arrays))
