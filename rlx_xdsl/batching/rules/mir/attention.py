"""Batching rules of attention and rope.

Attention's `[B, H, S, D]` operands fold the batch into B (a shared k or v is repeated
for each example); a mask of its own per example maps the op over the batch. Rope
rotates `[..., S, D]` with tables broadcasting to `[..., S, n_rot / 2]`: the batch is
one more leading dim of x, and batched tables line up with it.
"""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import folded, materialize, pad_rank, rebuilt, sequential
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.attention import AttentionOp, RopeOp
from rlx_xdsl.emitter import Emitter
from rlx_xdsl.shapes import shape_of


def heads(e: Emitter, op: Operation, args: BatchArgs, data: int) -> Results:
    """Fold the batch into B of the first `data` operands; a mask must be shared and
    have no batch of its own (B = 1), else the op is mapped over the batch."""
    mask = op.operands[data:]
    if mask and (args.batched[data] or (shape_of(mask[0].type) or [1])[0] != 1
                 and len(shape_of(mask[0].type)) == len(shape_of(op.operands[0].type))):  # fmt: skip
        return sequential(e, op, args)
    return folded(e, op, args, range(data))


@BATCH_RULES.register(AttentionOp)
def attention(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    return heads(e, op, args, 3)


def rotation(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """x (or dy) gets the batch axis; batched cos and sin are padded to its rank."""
    x, cos, sin = args.values
    x = x if args.batched[0] else materialize(e, x, args.size)
    rank = len(shape_of(op.operands[0].type))
    tables = [pad_rank(e, t, rank) if b else t for t, b in zip((cos, sin), args.batched[1:], strict=True)]
    return rebuilt(e, op, [x, *tables])


BATCH_RULES.add(RopeOp, rotation)
