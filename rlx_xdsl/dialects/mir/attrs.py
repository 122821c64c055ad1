"""Attributes shared by several MIR ops: enums, and the cast configuration."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import BoolAttr, DenseArrayBase, IntegerAttr, i1, i64
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import ParametrizedAttribute, SpacedOpaqueSyntaxAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
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
    """RLX's 17 activations (`Activation` enum) and our `log1p`, `expm1` (the
    precise `log(1 + x)` and `exp(x) - 1`) and `erf`, which RLX lacks; each value is also the
    short name of its MIR op (`mir.gelu`, ...). `elementwise.activation_op(kind)`
    gives the op class."""

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
    LOG1P = "log1p"
    EXPM1 = "expm1"
    ERF = "erf"


@irdl_attr_definition
class ActivationAttr(EnumAttribute[Activation], SpacedOpaqueSyntaxAttribute):
    """An activation kind held by a fused or backward op: `#mir<activation silu>`, bare `silu` in the op."""

    name = "mir.activation"


@irdl_attr_definition
class CastConfigAttr(ParametrizedAttribute):
    """RLX's `CastConfig` for blocked-scaling casts: `#mir.cast_config<sf_block = [rows, cols], round_sf>`.

    `sf_block` is the block of elements (over the last two dims) that shares one
    scaling factor; `round_sf` rounds the factors to powers of two (UE8M0). The
    destination dtype, CastConfig's `out_dtype`, is the cast's result type. A plain
    cast has no config: RLX's `CastConfig::plain`. Shared by every op that emits a
    typed output (`mir.cast`, later fused ops), which check it with
    `elementwise.check_cast_config`.
    """

    name = "mir.cast_config"

    sf_block: DenseArrayBase
    round_sf: BoolAttr

    def __init__(self, sf_block: Sequence[int], round_sf: bool = False):
        super().__init__(
            DenseArrayBase.from_list(i64, [int(v) for v in sf_block]), IntegerAttr(int(round_sf), i1)
        )

    @property
    def block(self) -> tuple[int, ...]:
        """`sf_block` as Python ints."""
        return tuple(self.sf_block.get_values())

    @property
    def rounds_to_power_of_two(self) -> bool:
        return bool(self.round_sf.value.data)

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> tuple[DenseArrayBase, BoolAttr]:
        with parser.in_angle_brackets():
            parser.parse_characters("sf_block", " in cast config")
            parser.parse_punctuation("=")
            block = parser.parse_comma_separated_list(parser.Delimiter.SQUARE, parser.parse_integer)
            round_sf = parser.parse_optional_punctuation(",") is not None
            if round_sf:
                parser.parse_characters("round_sf", " in cast config")
        return DenseArrayBase.from_list(i64, block), IntegerAttr(int(round_sf), i1)

    def print_parameters(self, printer: Printer) -> None:
        with printer.in_angle_brackets():
            printer.print_string("sf_block = [" + ", ".join(map(str, self.block)) + "]")
            if self.rounds_to_power_of_two:
                printer.print_string(", round_sf")


ATTRIBUTES = [ComparePredicateAttr, ReduceKindAttr, ActivationAttr, CastConfigAttr]
