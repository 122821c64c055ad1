"""The Gaussian-splatting ops have no linalg lowering: their depth sort, per-tile lists and
early-terminating compositing are data-dependent control flow that RLX runs as dedicated
kernels. Each rule raises a located "no lowering" error naming the op."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import Operation, SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    LoweringError,
)
from rlx_xdsl.dialects.mir import splat


@LOWERINGS.register(*splat.OPS)
def no_lowering(lw: Lowering, op: Operation) -> Sequence[SSAValue]:
    raise LoweringError(
        "no lowering to linalg: Gaussian splatting (sorted per-tile lists, early-terminating compositing) "
        "runs in the interpreter only"
    )
