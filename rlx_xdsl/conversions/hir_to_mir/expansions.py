"""Reusing a block's expansion for every later block of the same signature.

A model repeats its layers: an N-layer decoder holds N `hir.llama_decoder_block`s
that differ only in their operands. A lowering reads nothing but its block's
operand types, result types and properties (the contract of `LOWERINGS`), so two
blocks that agree on those, and on which operands are the same value, expand to
the same ops over different operands. `rlx-lower-hir` therefore lowers the first
block of each signature through its lowering (building each op, inferring its
types) and gives every later one a clone of those ops (`Operation.clone`: the
types and attributes are copied, not re-derived), remapped to the block's
operands and located at the block. The tests check that both ways print the
same IR, locations included.
"""

from __future__ import annotations

from collections.abc import Hashable, Sequence
from dataclasses import dataclass

from xdsl.dialects.builtin import NameLoc
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint

from rlx_xdsl.conversions.hir_to_mir.registry import Policy, block_location
from rlx_xdsl.dialects.hir.base import HirOperation


def signature(op: HirOperation, policy: Policy) -> Hashable:
    """What a block's expansion depends on: op class, policy, operand and result types,
    properties, and which operands are one value (`swiglu(x, w, w, w)` is not `swiglu(x, a, b, c)`)."""
    operands = tuple(op.operands)
    return (
        type(op),
        policy,
        tuple(v.type for v in operands),
        tuple(operands.index(v) for v in operands),
        tuple(r.type for r in op.results),
        tuple(sorted(op.properties.items())),
    )


@dataclass(frozen=True)
class Expansion:
    """The MIR ops one block was lowered to, recorded to be cloned for its look-alikes."""

    operands: tuple[SSAValue, ...]
    """The block operands the ops read."""
    ops: tuple[Operation, ...]
    """The ops, in order, each located at `NameLoc(label + suffix, ...)`."""
    suffixes: tuple[str, ...]
    """What each op's location name adds to the block label (`"[0]"` for a pair's first slot)."""
    results: tuple[SSAValue, ...]
    """The values that replaced the block's results."""

    @staticmethod
    def record(
        block: HirOperation, label: str, ops: Sequence[Operation], results: Sequence[SSAValue]
    ) -> Expansion | None:
        """The expansion of `block`, or None when an op is not labelled from `label` (then it
        cannot be relabelled for another block) or a result is not made by the ops."""
        suffixes = []
        for op in ops:
            location = op.location
            if not (isinstance(location, NameLoc) and location.desc.data.startswith(label)):
                return None
            suffixes.append(location.desc.data[len(label) :])
        made = {r for op in ops for r in op.results}
        if not all(r in made for r in results):
            return None
        return Expansion(tuple(block.operands), tuple(ops), tuple(suffixes), tuple(results))

    def clone_before(self, block: HirOperation, rewriter: PatternRewriter) -> list[SSAValue]:
        """Insert a copy of the ops before `block`, reading its operands and located at it;
        return the values replacing its results."""
        mapper: dict[SSAValue, SSAValue] = dict(zip(self.operands, block.operands))
        label = block.block_label()
        copies = []
        for op, suffix in zip(self.ops, self.suffixes):
            copy = op.clone(value_mapper=mapper, clone_name_hints=False)
            copy.location = block_location(block, label + suffix)
            copies.append(copy)
        rewriter.insert(copies, InsertPoint.before(block))
        return [mapper[r] for r in self.results]
