"""Valid values for operands that are positions, not data (INDEX and LABEL roles).

Random data in an index operand would point outside its table and make the
graph fail at run time, so such operands get constants in range instead. Which
operands need that is read from the op's declared `OperandRoles`, not known per
op here: a recipe names its data operands and the bound, this fills in the rest.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.dialects.traits import OperandRoles, Role
from rlx_xdsl.registry import OpClass
from rlx_xdsl.testing.graphgen.state import GraphState, dense
from rlx_xdsl.testing.graphgen.values import Shape

ID_ROLES = frozenset({Role.INDEX, Role.LABEL})
ID_DTYPES = ("i64", "i32", "f32")
"""Integer ids, or RLX's encoding of them as f32."""


def declared_roles(op_class: OpClass) -> dict[str, Role]:
    """The non-DATA roles `op_class` declares, by operand definition name."""
    trait = op_class.get_trait(OperandRoles)
    return dict(trait.roles) if trait is not None else {}


def ids(s: GraphState, shape: Shape, upper: int) -> SSAValue:
    """A constant of `shape` holding valid ids, each in `[0, upper)`."""
    data = s.rng().integers(0, upper, size=shape)
    return s.emit(ConstantOp, dense(data, s.choice(ID_DTYPES)))


def with_ids(
    s: GraphState, op_class: OpClass, shape: Shape, upper: int, **data: SSAValue
) -> list[SSAValue]:
    """`op_class`'s operands in definition order: `data` by name, ids for INDEX/LABEL operands.

    Each INDEX or LABEL operand not given gets new ids of `shape` in `[0, upper)`
    (the size of the indexed dim, or the number of classes). Any other operand
    must be given: an op that does not declare its roles fails here, not at run time.
    Definition order is the order op constructors take their operands in.
    """
    roles = declared_roles(op_class)
    names = [name for name, _ in op_class.get_irdl_definition().operands]
    unknown = [name for name in data if name not in names]
    if unknown:
        raise ValueError(f"'{op_class.name}' has no operand named {', '.join(map(repr, unknown))}")
    operands = []
    for name in names:
        if name in data:
            operands.append(data[name])
        elif roles.get(name) in ID_ROLES:
            operands.append(ids(s, shape, upper))
        else:
            raise ValueError(
                f"'{op_class.name}' operand '{name}' is neither given nor an INDEX or LABEL operand"
            )
    return operands
