"""SSA dominance: every use must come after its definition, as `mlir-opt` checks.

xDSL 0.74's verifier does not check dominance: swapping two lines of a function
was accepted and printed back unchanged, and every pass and the interpreter
assume it. `first_non_dominated_use(root)` finds the first use, in program order,
of a value that does not dominate it:

* in the same block, the defining op must come before the user (a block's
  arguments dominate the whole block); an op's results are not visible in its
  own regions;
* a value defined in an enclosing block dominates the nested regions of the ops
  after it; a value of a sibling or nested region dominates nothing here;
* across the blocks of one region, the defining block must dominate the user's
  block (xDSL's `DominanceInfo`, computed only for multi-block regions);
* the body of a `builtin.module` is a graph region (MLIR's rule): no order there.

Linear in the number of ops for the IR RLX writes (each use is checked where it
is); block positions are numbered once per block.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, BlockArgument, Operation, OpResult, Region, SSAValue
from xdsl.irdl.dominance import DominanceInfo


@dataclass(frozen=True)
class BadUse:
    """`user`'s operand number `index` does not dominate it."""

    user: Operation
    index: int
    value: SSAValue


class _Positions:
    """Op positions within blocks and block dominance within regions, computed on demand."""

    def __init__(self) -> None:
        self._index: dict[Block, dict[Operation, int]] = {}
        self._dominance: dict[Region, DominanceInfo] = {}

    def before(self, a: Operation, b: Operation) -> bool:
        block = a.parent_block()
        assert block is not None
        index = self._index.get(block)
        if index is None:
            index = self._index[block] = {op: i for i, op in enumerate(block.ops)}
        return index[a] < index[b]

    def block_dominates(self, a: Block, b: Block) -> bool:
        region = a.parent
        assert region is not None
        info = self._dominance.get(region)
        if info is None:
            info = self._dominance[region] = DominanceInfo(region)
        return info.strictly_dominates(a, b)


def _definition_block(value: SSAValue) -> Block | None:
    if isinstance(value, BlockArgument):
        return value.block
    if isinstance(value, OpResult):
        return value.op.parent_block()
    return None


def _is_graph_region(region: Region | None) -> bool:
    return region is not None and isinstance(region.parent_op(), ModuleOp)


def dominates(value: SSAValue, user: Operation, positions: _Positions) -> bool | None:
    """Whether `value` dominates its use by `user`; None when `value` is defined
    outside every region enclosing `user` (the caller decides what that means)."""
    block = _definition_block(value)
    if block is None:
        return None
    region = block.parent
    # The ancestor of `user` (itself included) that sits directly in `region`.
    anchor: Operation | None = user
    while anchor is not None and anchor.parent_region() is not region:
        anchor = anchor.parent_op()
    if anchor is None:
        return False
    if _is_graph_region(region):
        return True
    anchor_block = anchor.parent_block()
    if anchor_block is not block:
        return positions.block_dominates(block, anchor_block)
    if isinstance(value, BlockArgument):
        return True
    definer = value.owner
    return definer is not anchor and positions.before(definer, anchor)


def first_non_dominated_use(root: Operation) -> BadUse | None:
    """The first use under `root`, in program order, that its value does not dominate.

    Values defined outside `root` are assumed to dominate (only `root` is checked).
    """
    positions = _Positions()
    for op in preorder(root):
        block = op.parent
        ordered = block is not None and not _is_graph_region(block.parent)
        for index, value in enumerate(op.operands):
            owner = value.owner
            if ordered and owner.parent is block:  # defined earlier in the same block (the usual case)
                if owner is not op and positions.before(owner, op):
                    continue
            elif ordered and owner is block:  # an argument of the user's own block
                continue
            if dominates(value, op, positions) is False and _defined_under(value, root):
                return BadUse(op, index, value)
    return None


def preorder(root: Operation):
    """`root` and every op nested in it, parents first, in program order.

    Iterative: xDSL's `walk` nests one generator per level, which costs O(depth)
    per op on deeply nested IR.
    """
    stack = [root]
    while stack:
        op = stack.pop()
        yield op
        stack.extend(reversed([child for region in op.regions for block in region.blocks for child in block.ops]))


def postorder(root: Operation):
    """`root` and every op nested in it, children first (iteratively)."""
    stack: list[tuple[Operation, bool]] = [(root, False)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            yield op
            continue
        stack.append((op, True))
        stack.extend((child, False) for child in reversed([c for r in op.regions for b in r.blocks for c in b.ops]))


def _defined_under(value: SSAValue, root: Operation) -> bool:
    block = _definition_block(value)
    op = block.parent_op() if block is not None else None
    while op is not None:
        if op is root:
            return True
        op = op.parent_op()
    return False
