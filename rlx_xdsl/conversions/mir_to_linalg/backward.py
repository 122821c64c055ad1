"""Lowering of MIR backward kernels: each through its `rlx-decompose-backward` rule
(primitive MIR, which the walk then lowers), and `mir.stop_gradient` as the identity.

Only the softmax-cross-entropy gradient has a direct rule (`loss.py`): its row
reductions are cheaper than its decomposition.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl import layers
from rlx_xdsl.conversions.mir_to_linalg import quant  # noqa: F401  (its direct rules come before the decompositions)
from rlx_xdsl.conversions.mir_to_linalg.lowering import (
    LOWERINGS,
    Lowering,
    by_expansion,
)
from rlx_xdsl.dialects.mir.backward import StopGradientOp
from rlx_xdsl.transforms.decompose_backward import DECOMPOSITIONS


@LOWERINGS.register(StopGradientOp)
def lower_stop_gradient(lw: Lowering, op: StopGradientOp) -> Sequence[SSAValue]:
    """Autodiff's marker computes nothing."""
    return [op.input]


layers.load("decompose-backward")
for _kernel in DECOMPOSITIONS:
    if _kernel not in LOWERINGS:
        LOWERINGS.add(_kernel, by_expansion(DECOMPOSITIONS[_kernel]))
