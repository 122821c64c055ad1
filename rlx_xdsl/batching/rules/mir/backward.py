"""Batching rules of the backward kernels.

Input gradients batch like their forward op (axes shift, NCHW folds into N). Weight
gradients (`*_gamma`, `*_beta`, `conv_backward_weight`) sum over the op's own batch
dims, which must not swallow the vmap batch: each example gets its own sum, mapped over
the batch.
"""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import (
    example_rank,
    folding,
    int_prop,
    leading_rule,
    map_over_batch,
    rebuilt,
    sequential,
)
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.batching.rules.mir.attention import heads, rotation
from rlx_xdsl.dialects.mir import backward as group
from rlx_xdsl.dialects.mir.backward import (
    AttentionBackwardOp,
    ConvBackwardInputOp,
    ConvBackwardWeightOp,
    CumsumBackwardOp,
    GatherBackwardOp,
    GroupNormBackwardBetaOp,
    GroupNormBackwardGammaOp,
    GroupNormBackwardInputOp,
    LayerNormBackwardGammaOp,
    LayerNormBackwardInputOp,
    PoolBackwardOp,
    RmsNormBackwardBetaOp,
    RmsNormBackwardGammaOp,
    RmsNormBackwardInputOp,
    RopeBackwardOp,
    StopGradientOp,
)
from rlx_xdsl.dialects.traits import is_elementwise
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import normalize_axis

for _op in group.OPS:
    if is_elementwise(_op):  # x and dy have the forward result's shape: both get the batch
        BATCH_RULES.add(_op, leading_rule(0, 1))

BATCH_RULES.add(LayerNormBackwardInputOp, leading_rule(0, 2, axis="axis"))
BATCH_RULES.add(RmsNormBackwardInputOp, leading_rule(0, 2, axis="axis"))
BATCH_RULES.add(CumsumBackwardOp, leading_rule(0, axis="axis"))
BATCH_RULES.add(StopGradientOp, leading_rule(0))
BATCH_RULES.add(GroupNormBackwardInputOp, folding(0, 2))
BATCH_RULES.add(ConvBackwardInputOp, folding(0))
BATCH_RULES.add(PoolBackwardOp, folding(0, 1))
BATCH_RULES.add(RopeBackwardOp, rotation)
for _op in (LayerNormBackwardGammaOp, RmsNormBackwardGammaOp, RmsNormBackwardBetaOp, GroupNormBackwardGammaOp,
            GroupNormBackwardBetaOp, ConvBackwardWeightOp):  # fmt: skip
    BATCH_RULES.add(_op, map_over_batch)


@BATCH_RULES.register(AttentionBackwardOp)
def attention_backward(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return heads(e, op, args, 4)


@BATCH_RULES.register(GatherBackwardOp)
def gather_backward(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """A batched dy scatters along `axis + 1`; batched indices map the op over the batch."""
    if args.batched[1]:
        return sequential(e, op, args)
    table_rank = example_rank(op.results[0])
    return rebuilt(e, op, args.values, axis=normalize_axis(int_prop(op, "axis"), table_rank) + 1)
