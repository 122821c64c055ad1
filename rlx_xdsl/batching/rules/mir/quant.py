"""Batching rules of the quantisation ops.

Per-tensor or per-channel (de)quantisation is elementwise: the channel axis shifts past
the batch axis. `fake_quantize` may take its scale from the whole tensor (`per_batch`),
and LSQ's scale gradient sums over the tensor: each example keeps its own, mapped over
the batch. `qmatmul` takes any leading dims of x; `dequant_matmul`'s `x[M, K]` folds into M and
qconv2d's images into N.
"""

from rlx_xdsl.batching.emit import folding, leading_rule, map_over_batch
from rlx_xdsl.batching.registry import BATCH_RULES
from rlx_xdsl.dialects.mir.quant import (
    DequantizeOp,
    DequantMatmulOp,
    FakeQuantizeBackwardOp,
    FakeQuantizeLsqBackwardScaleOp,
    FakeQuantizeLsqBackwardXOp,
    FakeQuantizeLsqOp,
    FakeQuantizeOp,
    QConv2dOp,
    QMatmulOp,
    QuantizeOp,
)

BATCH_RULES.add(QuantizeOp, leading_rule(0, axis="axis"))
BATCH_RULES.add(DequantizeOp, leading_rule(0, axis="axis"))
BATCH_RULES.add(FakeQuantizeLsqOp, leading_rule(0, axis="axis"))
BATCH_RULES.add(FakeQuantizeLsqBackwardXOp, leading_rule(0, 2, axis="axis"))
for _op in (FakeQuantizeOp, FakeQuantizeBackwardOp, FakeQuantizeLsqBackwardScaleOp):
    BATCH_RULES.add(_op, map_over_batch)
BATCH_RULES.add(QMatmulOp, leading_rule(0))
BATCH_RULES.add(DequantMatmulOp, folding(0))
BATCH_RULES.add(QConv2dOp, folding(0))
