"""Batching rules of the signal ops: elementwise complex ops and the FFT over the last axis
take any leading dims; log-mel's `spectrum[..., F] @ filters[F, M]` batches the spectrum."""

from rlx_xdsl.batching.emit import leading_rule
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.signal import (
    ComplexNormSqBackwardOp,
    ComplexNormSqOp,
    ConjugateOp,
    FftOp,
    LogMelBackwardOp,
    LogMelOp,
)

for _op in (ConjugateOp, ComplexNormSqOp, FftOp):
    BATCH_RULES.add(_op, leading_rule(0))
BATCH_RULES.add(ComplexNormSqBackwardOp, leading_rule(0, 1))
BATCH_RULES.add(LogMelOp, leading_rule(0))
BATCH_RULES.add(LogMelBackwardOp, leading_rule(0, 2))
