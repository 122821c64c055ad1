"""What fusion patterns ask about values and ops (applied by `rewriting.apply_patterns`).

RLX decides fusibility from whole-graph use counts in which graph outputs do
not count, so it can fuse away a value the graph also returns. In SSA form a
use by `func.return` is a use like any other: "used once" below means the
value is consumed by exactly one op and is not a function result.
"""

from __future__ import annotations

from xdsl.ir import Block, BlockArgument, Operation, SSAValue

from rlx_xdsl.dialects.mir.elementwise import UnaryOperation
from rlx_xdsl.dialects.traits import is_elementwise
from rlx_xdsl.shapes import shape_of
from rlx_xdsl.transforms.rewriting import apply_patterns as apply_patterns  # the fusion passes' import


def sole_user(value: SSAValue) -> Operation | None:
    """The op consuming `value`, when exactly one op consumes it (once)."""
    return value.get_user_of_unique_use()


def used_once_by(value: SSAValue, user: Operation) -> bool:
    """`value`'s only use is by `user`."""
    return sole_user(value) is user


def owner_if(value: SSAValue, op_class: type[Operation] | tuple[type[Operation], ...]):
    """The op of class `op_class` that defines `value`, or None."""
    owner = value.owner
    return owner if isinstance(owner, op_class) else None


def rank(value: SSAValue) -> int:
    return len(shape_of(value.type))


def activation_kind(op: Operation):
    """The RLX `Activation` kind of an activation op, or None for other ops."""
    return op.KIND if isinstance(op, UnaryOperation) else None


def is_fusable_step(op: Operation) -> bool:
    """An elementwise op without regions: what elementwise regions and epilogues absorb."""
    return is_elementwise(op) and not op.regions


def dominates(value: SSAValue, op: Operation) -> bool:
    """`value` is available at `op`: a block argument of an enclosing block, or defined earlier."""
    if isinstance(value, BlockArgument):
        block: Block | None = op.parent_block()
        while block is not None:
            if block is value.block:
                return True
            parent = block.parent_op()
            block = parent.parent_block() if parent is not None else None
        return False
    owner = value.owner
    assert isinstance(owner, Operation)
    if owner.parent_block() is not op.parent_block():
        return False
    return owner.is_before_in_block(op)


def in_block_order(members: set[Operation], last: Operation) -> list[Operation]:
    """`members` (in `last`'s block, none after it) in block order.

    Walks back from `last` only as far as the earliest member, so collecting a
    fused chain costs its span, not the block's length.
    """
    found: list[Operation] = []
    op: Operation | None = last
    while op is not None and len(found) < len(members):
        if op in members:
            found.append(op)
        op = op.prev_op
    return found[::-1]
