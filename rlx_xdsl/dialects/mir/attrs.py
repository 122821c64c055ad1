"""Enum attributes shared by several MIR ops."""

from __future__ import annotations

from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.utils.str_enum import StrEnum


class ComparePredicate(StrEnum):
    EQ = "eq"
    NE = "ne"
    LT = "lt"
    LE = "le"
    GT = "gt"
    GE = "ge"


@irdl_attr_definition
class ComparePredicateAttr(EnumAttribute[ComparePredicate], SpacedOpaqueSyntaxAttribute):
    """The predicate of `mir.compare`: `#mir<predicate lt>`, or bare `lt` in the op."""

    name = "mir.predicate"


class ReduceKind(StrEnum):
    SUM = "sum"
    MEAN = "mean"
    MAX = "max"
    MIN = "min"
    PROD = "prod"


@irdl_attr_definition
class ReduceKindAttr(EnumAttribute[ReduceKind], SpacedOpaqueSyntaxAttribute):
    """The combining function of `mir.reduce` and `mir.pool`."""

    name = "mir.reduce_kind"


class Activation(StrEnum):
    """RLX's 17 activations (`Activation` enum); each value is also the short name of
    its MIR op (`mir.gelu`, ...). `elementwise.activation_op(kind)` gives the op class."""

    GELU = "gelu"
    GELU_APPROX = "gelu_approx"
    SILU = "silu"
    RELU = "relu"
    SIGMOID = "sigmoid"
    TANH = "tanh"
    EXP = "exp"
    LOG = "log"
    SQRT = "sqrt"
    RSQRT = "rsqrt"
    NEG = "neg"
    ABS = "abs"
    SIN = "sin"
    COS = "cos"
    TAN = "tan"
    ATAN = "atan"
    ROUND = "round"


@irdl_attr_definition
class ActivationAttr(EnumAttribute[Activation], SpacedOpaqueSyntaxAttribute):
    """An activation kind held by a fused or backward op: `#mir<activation silu>`, bare `silu` in the op."""

    name = "mir.activation"


ATTRIBUTES = [ComparePredicateAttr, ReduceKindAttr, ActivationAttr]
