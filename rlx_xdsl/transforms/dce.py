"""`rlx-dce`: remove side-effect-free ops whose results nobody uses.

RLX's `DeadCodeElimination` keeps the nodes reachable backwards from the graph
outputs. On SSA IR the same set falls out of one reverse sweep: visiting ops from
the last to the first, an op is dead when none of its results is used and it has
no side effects; erasing it can only make earlier ops dead, which the sweep
reaches afterwards. So one pass over each block suffices (no fixpoint).
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation
from xdsl.passes import ModulePass
from xdsl.traits import (
    IsTerminator,
    MemoryEffect,
    RecursiveMemoryEffect,
    ReturnLike,
    SymbolOpInterface,
)

from rlx_xdsl.transforms.pipeline import ReportsChanges
from rlx_xdsl.transforms.statistics import Statistic

ERASED = Statistic("num-erased", "Number of dead ops erased")


class PurityCache:
    """Memoised "has no side effects, including everything nested in it".

    An op with regions counts as pure only when every op in its bodies is pure,
    whatever traits it declares itself (RecursiveMemoryEffect semantics, applied
    also to ops that claim `Pure` but hold an impure body). Memoising makes the
    check linear overall: each op's purity is computed once, even though the
    sweep asks about a region op and later about the ops in its body.
    """

    def __init__(self) -> None:
        self._known: dict[Operation, bool] = {}

    def is_pure(self, op: Operation) -> bool:
        known = self._known.get(op)
        if known is None:
            known = _own_effects_free(op) and all(
                self.is_pure(inner)
                for region in op.regions
                for block in region.blocks
                for inner in block.ops
            )
            self._known[op] = known
        return known


def _own_effects_free(op: Operation) -> bool:
    """The op's declared effects, ignoring its body, are known to be empty.

    Ops without any memory-effect trait have unknown effects and are kept.
    Return-like terminators only hand values to their parent, so they do not
    make a body impure even when they declare nothing.
    """
    traits = op.get_traits_of_type(MemoryEffect)
    if not traits:
        return op.has_trait(ReturnLike)
    return all(
        isinstance(trait, RecursiveMemoryEffect) or trait.get_effects(op) == set()
        for trait in traits
    )


def is_dead(op: Operation, purity: PurityCache) -> bool:
    """Erasing `op` cannot change what the function computes."""
    return (
        all(result.first_use is None for result in op.results)
        and not op.has_trait(IsTerminator)
        and not op.has_trait(SymbolOpInterface)
        and purity.is_pure(op)
    )


def _sweep_block(block: Block, purity: PurityCache) -> int:
    """Erase dead ops of `block` (and of bodies of live ops) from last to first."""
    erased = 0
    op = block.last_op
    while op is not None:
        previous = op.prev_op
        if is_dead(op, purity):
            block.erase_op(op)
            erased += 1
        else:
            for region in reversed(op.regions):
                for inner in reversed(region.blocks):
                    erased += _sweep_block(inner, purity)
        op = previous
    return erased


def eliminate_dead_code(function: func.FuncOp) -> int:
    """Remove the dead ops of one function; return how many were erased.

    An erased op with regions counts once, however many ops its body held.
    Function arguments are never removed: they are the function's signature.
    """
    purity = PurityCache()
    return sum(_sweep_block(block, purity) for block in reversed(function.body.blocks))


def eliminate_dead_code_in_block(block: Block) -> int:
    """Remove the dead ops of one block (a region body built by a pass); return how many."""
    return _sweep_block(block, PurityCache())


@dataclass(frozen=True)
class DeadCodeEliminationPass(ReportsChanges, ModulePass):
    """Remove unused side-effect-free ops (one reverse sweep per func.func).

    Regions count as pure only when their bodies are. Unlike RLX, unused
    function arguments are kept: they are part of the function's signature.
    """

    name = "rlx-dce"
    STATISTICS = (ERASED,)

    def apply_and_report(self, ctx: Context, op: ModuleOp) -> bool:
        functions = [f for f in op.walk() if isinstance(f, func.FuncOp)]
        erased = sum(eliminate_dead_code(function) for function in functions)
        ERASED.add(erased)
        return erased > 0
