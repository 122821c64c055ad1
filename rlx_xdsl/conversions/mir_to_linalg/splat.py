"""The Gaussian-splatting ops have no linalg lowering: their depth sort, per-tile lists and
early-terminating compositing are data-dependent control flow that RLX runs as dedicated
kernels. Each rule is a located "no lowering" error naming the op."""

from __future__ import annotations

from rlx_xdsl.conversions.mir_to_linalg.lowering import no_lowering
from rlx_xdsl.dialects.mir import splat

no_lowering(
    *splat.OPS,
    reason="Gaussian splatting (sorted per-tile lists, early-terminating compositing) runs in the interpreter only",
)
