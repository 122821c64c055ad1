"""Lowering of MIR complex and signal ops: none yet, each a located error.

The lowered IR computes on real element types only (`scalars.storage_type` refuses
complex<f32>), and upstream linalg has no Fourier transform, so conjugate,
complex_norm_sq(+backward) and fft (either layout) are refused with a message
naming the op; `docs/deviations.md` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering, LoweringError
from rlx_xdsl.dialects.mir import signal


NO_LOWERING = (signal.ConjugateOp, signal.ComplexNormSqOp, signal.ComplexNormSqBackwardOp, signal.FftOp)
"""Ops whose rule is a located refusal: backend tests have no case for them."""


@LOWERINGS.register(*NO_LOWERING)
def no_lowering(lw: Lowering, op: signal.FftOp) -> Sequence[SSAValue]:
    raise LoweringError(
        "no lowering to linalg: complex<f32> values and Fourier transforms have no upstream "
        "linalg form here (run it with rlx-run)"
    )
