"""Traits and interfaces that classify RLX ops for the passes that read them.

* `PrecisionClass`: the op's AMP class (AMP picks a precision per class);
* `Elementwise`: the op maps elements independently (fusion builds regions of them);
* `OperandRoles`: which operands are indices, labels, predicates or masks rather
  than data (AMP never casts them, autodiff never differentiates through them);
* `ViewOf`: the result can alias operand 0's buffer (LIR's memory plan);
* `WritesInPlace`: the result may be written into a dying operand's buffer (LIR);
* `Sampling`: the op selects from a distribution (top-k); LIR schedules it in the epilogue;
* `RegionSignatureInterface`: the types of each region's block arguments
  (`rlx-specialize` retypes them after binding shapes).

No pass keeps its own list of op names: adding an op means declaring its traits
next to its definition, and every pass reads them through the helpers here.
"""

from __future__ import annotations

import abc
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import ClassVar

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, Region, SSAValue
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


# Operand roles ----------------------------------------------------------------------


class Role(Enum):
    """What an operand means to the op. Only DATA operands are values to compute on."""

    DATA = "data"
    INDEX = "index"
    """Positions into another operand (gather/scatter indices), whatever their dtype."""
    LABEL = "label"
    """Class ids (softmax-cross-entropy labels), whatever their dtype."""
    PREDICATE = "predicate"
    """A condition choosing between values (`where`'s cond, `if`'s predicate)."""
    MASK = "mask"
    """An attention mask: kept positions (custom) or an additive bias."""
    SHAPE = "shape"
    """Read for its shape only, never its values (`like` of `mir.iota` and `mir.expand`)."""

    @property
    def is_data(self) -> bool:
        return self is Role.DATA


@dataclass(frozen=True)
class OperandRoles(OpTrait):
    """The roles of the op's operand definitions that are not DATA, by definition name.

    `OperandRoles.of(indices=Role.INDEX)`; a variadic or optional definition gives
    its role to each of its operands.
    """

    roles: tuple[tuple[str, Role], ...] = ()

    @staticmethod
    def of(**roles: Role) -> OperandRoles:
        return OperandRoles(tuple(roles.items()))


@cache
def _role_table(op_class: type[Operation]) -> tuple[tuple[str, Role], ...]:
    """`(definition name, role)` for each operand definition of `op_class`, in order."""
    trait = op_class.get_trait(OperandRoles)
    declared = dict(trait.roles) if trait is not None else {}
    definitions = getattr(op_class, "get_irdl_definition", None)
    names = [name for name, _ in definitions().operands] if definitions is not None else []
    return tuple((name, declared.get(name, Role.DATA)) for name in names)


@cache
def _all_data(op_class: type[Operation]) -> bool:
    """Every operand of `op_class` is DATA (most ops): no need to size its operand groups."""
    return all(role is Role.DATA for _, role in _role_table(op_class))


def operand_roles(op: Operation) -> list[Role]:
    """The role of each of `op`'s operands, in operand order (DATA unless declared).

    Ops without IRDL operand definitions (another framework's) are all DATA.
    """
    table = _role_table(type(op))
    if not table or _all_data(type(op)):
        return [Role.DATA] * len(op.operands)
    roles: list[Role] = []
    for name, role in table:
        value = getattr(op, name)
        count = 1 if isinstance(value, SSAValue) else 0 if value is None else len(value)
        roles.extend([role] * count)
    return roles


def data_operands(op: Operation) -> list[int]:
    """Indices of `op`'s DATA operands: the ones AMP may cast and autodiff differentiates."""
    return [i for i, role in enumerate(operand_roles(op)) if role.is_data]


# Buffers: views and in-place writes (read by LIR's memory plan) ----------------------


def _always(op: Operation) -> bool:
    return True


def _no_offset(op: Operation) -> int:
    return 0


@dataclass(frozen=True)
class ViewOf(OpTrait):
    """The op's result can be operand 0's buffer itself, at an element offset.

    `when(op)` says whether this instance is a view (a cast is one only when it
    keeps the dtype); `offset(op)` is the first element of the result in
    operand 0's row-major buffer.
    """

    when: Callable[[Operation], bool] = field(default=_always)
    offset: Callable[[Operation], int] = field(default=_no_offset)


def view_source(op: Operation) -> SSAValue | None:
    """The operand whose buffer `op`'s result aliases, or None when `op` computes a new buffer."""
    trait = op.get_trait(ViewOf)
    return op.operands[0] if trait is not None and trait.when(op) else None


def view_offset(op: Operation) -> int:
    """The element offset of a view's result in its source buffer (0 for non-views)."""
    trait = op.get_trait(ViewOf)
    return trait.offset(op) if trait is not None and trait.when(op) else 0


@dataclass(frozen=True)
class WritesInPlace(OpTrait):
    """Each result element depends only on the same element of the operands, so the
    result may overwrite an operand buffer of the same shape and element size."""


def in_place_operands(op: Operation) -> list[int]:
    """Operands whose buffer `op` may overwrite with its (single) result."""
    if not op.has_trait(WritesInPlace) or len(op.results) != 1:
        return []
    result = op.results[0].type
    if not isinstance(result, TensorType):
        return []
    return [
        i
        for i, v in enumerate(op.operands)
        if isinstance(v.type, TensorType)
        and v.type.get_shape() == result.get_shape()
        and _element_bytes(v.type.element_type) == _element_bytes(result.element_type)
    ]


@dataclass(frozen=True)
class Sampling(OpTrait):
    """The op picks results out of a distribution (top-k, sampling): the end of a
    decoding step, so LIR's phase schedule runs it in the epilogue (RLX's `derive_phases`)."""


def is_sampling(op: Operation | type[Operation]) -> bool:
    return op.has_trait(Sampling)


def _element_bytes(element_type: Attribute) -> int:
    from rlx_xdsl import dtypes

    return dtypes.dtype_of(element_type).nbytes


# Regions ---------------------------------------------------------------------------


class RegionSignatureInterface(Operation, abc.ABC):
    """An op that states the types of each of its regions' entry-block arguments.

    The types follow from the op's operand types (a loop body takes the carried
    values; a scan body `[carry, bcast..., x_t...]`). Passes that change operand
    types (`rlx-specialize`) retype the block arguments from here, instead of
    knowing every region op.
    """

    REGION_SIGNATURES: ClassVar[Mapping[str, str]] = {}
    """Each region's block arguments and yielded values in words, by region name
    (`"(carry..., x_t...) -> (carry...)"`), for the op reference."""

    @abc.abstractmethod
    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        """The types `region`'s entry-block arguments must have, in order."""
        raise NotImplementedError()


class RegionOperandsInterface(RegionSignatureInterface, abc.ABC):
    """A region op whose regions receive some of its operands as block arguments.

    `mir.if` hands its captures to both branches and `mir.while` its carried
    values to cond and body.
    """

    @abc.abstractmethod
    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        """The operands whose values `region`'s entry-block arguments take, in order."""
        raise NotImplementedError()

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        return [v.type for v in self.region_operands(region)]
