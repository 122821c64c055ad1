"""Batching rules of attention and rope.

Attention's `[B, H, S, D]` operands fold the batch into B (a shared k or v is repeated
for each example), and so does the mask where it has a B of its own. Rope
rotates `[..., S, D]` with tables broadcasting to `[..., S, n_rot / 2]`: the batch is
one more leading dim of x, and batched tables line up with it.
"""

from xdsl.ir import Operation

from rlx_xdsl.batching.emit import fold, folded, materialize, pad_rank, rebuilt
from rlx_xdsl.batching.registry import BATCH_RULES, BatchArgs, Results
from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind, RopeOp
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import shape_of


def heads(e: Emitter, op: Operation, args: BatchArgs, data: int) -> Results:
    """Fold the batch into B of the first `data` operands (q, k, v and dy). A custom mask
    `[B, Sk]` folds with them; a bias mask shared by every B broadcasts as it is, any other
    is broadcast to `[N, B, ...]` and folded."""
    values, batched_ = list(args.values), list(args.batched)
    if len(op.operands) > data:
        mask, mask_b = values[data], batched_[data]
        per_example = shape_of(op.operands[data].type)
        if op.kind == MaskKind.CUSTOM:
            values[data] = fold(e, mask if mask_b else materialize(e, mask, args.size))
        elif mask_b or (len(per_example) == 4 and per_example[0] != 1):
            b = shape_of(op.operands[0].type)[0]
            mask = pad_rank(e, mask if mask_b else materialize(e, mask, args.size), 4)
            values[data] = fold(e, e.mir.expand(mask, target_shape=[args.size, b, -1, -1, -1]))
        batched_[data] = False  # handled: folded() leaves it alone
    return folded(e, op, BatchArgs(args.size, values, batched_), range(data))


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
