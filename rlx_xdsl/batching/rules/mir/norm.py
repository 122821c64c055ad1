"""Batching rules of the norms: `axis..` norms shift their axis; NCHW norms fold the batch
into N. A batched gamma or beta (per-example weights) maps the op over the batch."""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import folding, int_prop, leading, shift_axis
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.norm import BatchNormInferenceOp, GroupNormOp, LayerNormOp, RmsNormOp
from rlx_xdsl.ir.emitter import Emitter


@BATCH_RULES.register(LayerNormOp, RmsNormOp)
def trailing_norm(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """Normalises dims `axis..`: the batch is one more leading dim (gamma, beta shared)."""
    return leading(e, op, args, [0], axis=shift_axis(int_prop(op, "axis")))


BATCH_RULES.add(GroupNormOp, folding(0))
BATCH_RULES.add(BatchNormInferenceOp, folding(0))
