"""Traits and interfaces that classify RLX ops for the passes that read them.

AMP reads `PrecisionClass`, fusion reads `Elementwise`, `rlx-specialize` reads
`RegionOperandsInterface`; none of them keeps its own list of op names. Adding an
op means declaring its traits next to its definition.
"""

from __future__ import annotations

import abc
from collections.abc import Sequence
from dataclasses import dataclass
from enum import Enum

from xdsl.ir import Operation, Region, SSAValue
from xdsl.traits import OpTrait


class Precision(Enum):
    """RLX's AMP op classes: each picks a precision under a policy."""

    COMPUTE = "compute"
    REDUCTION = "reduction"
    ELEMENTWISE = "elementwise"
    DATA_MOVEMENT = "data-movement"
    BOUNDARY = "boundary"


@dataclass(frozen=True)
class PrecisionClass(OpTrait):
    """Declares which AMP class an op belongs to."""

    kind: Precision


@dataclass(frozen=True)
class Elementwise(OpTrait):
    """The op maps elements independently (after broadcasting its operands)."""


COMPUTE = PrecisionClass(Precision.COMPUTE)
REDUCTION = PrecisionClass(Precision.REDUCTION)
ELEMENTWISE = PrecisionClass(Precision.ELEMENTWISE)
DATA_MOVEMENT = PrecisionClass(Precision.DATA_MOVEMENT)
BOUNDARY = PrecisionClass(Precision.BOUNDARY)


def precision_class(op: Operation | type[Operation]) -> Precision | None:
    """The op's AMP class, or None for ops that do not declare one (func, builtin)."""
    trait = op.get_trait(PrecisionClass)
    return trait.kind if trait is not None else None


def is_elementwise(op: Operation | type[Operation]) -> bool:
    return op.has_trait(Elementwise)


class RegionOperandsInterface(Operation, abc.ABC):
    """An op whose regions receive some of its operands as entry-block arguments.

    `mir.if` hands its captures to both branches and `mir.while` its carried
    values to cond and body. Passes that change operand types (`rlx-specialize`)
    ask `region_operands` which block arguments must follow, instead of knowing
    every such op.
    """

    @abc.abstractmethod
    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        """The operands whose values `region`'s entry-block arguments take, in order."""
        raise NotImplementedError()
