"""numpy semantics of the MIR kernels with a body: the interpreter runs the body itself.

`mir.elementwise_region` runs its region on its inputs; `mir.fused_matmul_epilogue`
runs the matmul kernel's formula, then its region on the product and the extras.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import fused_regions as fr
from rlx_xdsl.interpreters.common import RegionRunner
from rlx_xdsl.interpreters.mir.fused import matmul


def run_elementwise_region(
    op: fr.ElementwiseRegionOp, *inputs: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    return run_region(op.body, inputs)


def run_fused_matmul_epilogue(
    op: fr.FusedMatmulEpilogueOp, lhs: np.ndarray, rhs: np.ndarray, *extras: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    return run_region(op.body, (matmul(lhs, rhs), *extras))


KERNELS = {fr.ElementwiseRegionOp: run_elementwise_region, fr.FusedMatmulEpilogueOp: run_fused_matmul_epilogue}
