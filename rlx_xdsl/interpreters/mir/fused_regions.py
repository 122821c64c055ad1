"""numpy semantics of the MIR kernels with a body: the interpreter runs the body itself.

`mir.elementwise_region` runs its region on its inputs (the prologue's input upsampled
first); `mir.fused_matmul_epilogue` runs the matmul kernel's formula, then its region on
the product and the extras; `mir.transform_region` applies its steps in turn;
`mir.batch_elementwise_region` runs its region on each slice (read through its prologue,
if any) and joins the results along axis 0.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import fused_regions as fr
from rlx_xdsl.interpreters.common import RegionRunner
from rlx_xdsl.interpreters.mir.fused import matmul


def layout(step: fr.Layout, x: np.ndarray) -> np.ndarray:
    """One layout step: the 2x nearest resize makes each pixel of `x[N, C, H, W]` a 2x2 block."""
    assert step is fr.Layout.RESIZE_NEAREST_2X
    return x.repeat(2, axis=2).repeat(2, axis=3)


def read(op: fr.PrologueMixin, values: tuple[np.ndarray, ...]) -> tuple[np.ndarray, ...]:
    """The body's arguments from its operands `values`: the prologue's read upsampled."""
    spec = op.prologue_spec
    if spec is None:
        return values
    step, index = spec
    return (*values[:index], layout(step, values[index]), *values[index + 1 :])


def run_elementwise_region(
    op: fr.ElementwiseRegionOp, *inputs: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    return run_region(op.body, read(op, inputs))


def run_transform_region(op: fr.TransformRegionOp, x: np.ndarray) -> tuple[np.ndarray, ...]:
    for step in op.layouts:
        x = layout(step, x)
    return (x,)


def run_batch_elementwise_region(
    op: fr.BatchElementwiseRegionOp, *inputs: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    slices, shared = inputs[: len(op.slices)], inputs[len(op.slices) :]
    return (np.concatenate([run_region(op.body, read(op, (s, *shared)))[0] for s in slices], axis=0),)


def run_fused_matmul_epilogue(
    op: fr.FusedMatmulEpilogueOp, lhs: np.ndarray, rhs: np.ndarray, *extras: np.ndarray, run_region: RegionRunner
) -> tuple[np.ndarray, ...]:
    return run_region(op.body, (matmul(lhs, rhs), *extras))


KERNELS = {
    fr.ElementwiseRegionOp: run_elementwise_region,
    fr.FusedMatmulEpilogueOp: run_fused_matmul_epilogue,
    fr.TransformRegionOp: run_transform_region,
    fr.BatchElementwiseRegionOp: run_batch_elementwise_region,
}
