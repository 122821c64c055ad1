"""The attributes that write a memory plan onto MIR: where each value lives, and when.

A planned value carries one *placement* (`lir.slot = ...` on the op that defines
it, in the function's `arg_attrs` for an argument, in `res_attrs` for an output):

* `#lir.slot<offset = 1024, size = 512>`: a buffer of its own, `size` bytes at
  byte `offset` of the arena; `in_place` marks a result written over the slot of
  an operand that dies at that step (`#lir.slot<offset = 1024, size = 512, in_place>`);
* `#lir.view<offset = 1152, size = 128, byte_offset = 128>`: no bytes of its own, an
  alias of its root buffer (operand 0, followed through views) `byte_offset` bytes in;
  `offset` is where that is in the arena;
* `#lir.external`: not in the arena (a parameter, input or constant the plan was
  told not to allocate, or a view of one).

Each op also carries its phase, `lir.phase = #lir.phase<steady>` (prologue,
steady or epilogue, RLX's `derive_phases`). The attributes only state the plan;
`lir.plan`'s verifier proves it.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import IntAttr
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, ParametrizedAttribute
from xdsl.irdl import irdl_attr_definition
from xdsl.parser import AttrParser
from xdsl.printer import Printer
from xdsl.utils.exceptions import VerifyException
from xdsl.utils.str_enum import StrEnum


def _parse_field(parser: AttrParser, name: str) -> int:
    """`name = <integer>`."""
    parser.parse_keyword(name)
    parser.parse_punctuation("=")
    return parser.parse_integer(allow_boolean=False)


def _require_non_negative(attr: str, **fields: int) -> None:
    for name, value in fields.items():
        if value < 0:
            raise VerifyException(f"#{attr} {name} must be >= 0, got {value}")


@irdl_attr_definition
class SlotAttr(ParametrizedAttribute):
    """A buffer of its own: `size` bytes at byte `offset` of the arena.

    `#lir.slot<offset = 1024, size = 512>`; `#lir.slot<offset = 1024, size = 512, in_place>`
    says the op writes its result over the slot of an operand whose last use is
    this op (only ops with the `WritesInPlace` trait may).
    """

    name = "lir.slot"
    offset: IntAttr
    size: IntAttr
    in_place: IntAttr

    def __init__(self, offset: int, size: int, in_place: bool = False):
        super().__init__(IntAttr(offset), IntAttr(size), IntAttr(int(in_place)))

    @property
    def start(self) -> int:
        return self.offset.data

    @property
    def end(self) -> int:
        return self.offset.data + self.size.data

    @property
    def writes_in_place(self) -> bool:
        return bool(self.in_place.data)

    def verify(self) -> None:
        _require_non_negative(self.name, offset=self.offset.data, size=self.size.data)
        if self.in_place.data not in (0, 1):
            raise VerifyException(f"#{self.name} in_place must be 0 or 1, got {self.in_place.data}")

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            offset = _parse_field(parser, "offset")
            parser.parse_punctuation(",")
            size = _parse_field(parser, "size")
            in_place = parser.parse_optional_punctuation(",") is not None
            if in_place:
                parser.parse_keyword("in_place")
        return (IntAttr(offset), IntAttr(size), IntAttr(int(in_place)))

    def print_parameters(self, printer: Printer) -> None:
        flag = ", in_place" if self.writes_in_place else ""
        printer.print_string(f"<offset = {self.offset.data}, size = {self.size.data}{flag}>")


@irdl_attr_definition
class ViewAttr(ParametrizedAttribute):
    """An alias of the root buffer (operand 0's, through views) at `byte_offset` in it.

    `#lir.view<offset = 1152, size = 128, byte_offset = 128>`: `offset` and `size`
    say which arena bytes the view reads; `offset` is the root's offset plus
    `byte_offset`.
    """

    name = "lir.view"
    offset: IntAttr
    size: IntAttr
    byte_offset: IntAttr

    def __init__(self, offset: int, size: int, byte_offset: int):
        super().__init__(IntAttr(offset), IntAttr(size), IntAttr(byte_offset))

    @property
    def start(self) -> int:
        return self.offset.data

    @property
    def end(self) -> int:
        return self.offset.data + self.size.data

    def verify(self) -> None:
        _require_non_negative(
            self.name, offset=self.offset.data, size=self.size.data, byte_offset=self.byte_offset.data
        )
        if self.byte_offset.data > self.offset.data:
            raise VerifyException(
                f"#{self.name} byte_offset {self.byte_offset.data} exceeds offset {self.offset.data}: "
                "the root would start before the arena"
            )

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        with parser.in_angle_brackets():
            offset = _parse_field(parser, "offset")
            parser.parse_punctuation(",")
            size = _parse_field(parser, "size")
            parser.parse_punctuation(",")
            byte_offset = _parse_field(parser, "byte_offset")
        return (IntAttr(offset), IntAttr(size), IntAttr(byte_offset))

    def print_parameters(self, printer: Printer) -> None:
        printer.print_string(
            f"<offset = {self.offset.data}, size = {self.size.data}, byte_offset = {self.byte_offset.data}>"
        )


@irdl_attr_definition
class ExternalAttr(ParametrizedAttribute):
    """A value kept outside the arena: `#lir.external` (not allocated by the plan, or a view of such a value)."""

    name = "lir.external"

    @classmethod
    def parse_parameters(cls, parser: AttrParser) -> Sequence[Attribute]:
        if parser.parse_optional_punctuation("<") is not None:
            parser.raise_error(f"#{cls.name} takes no parameters")
        return ()


Placement = SlotAttr | ViewAttr | ExternalAttr
PLACEMENTS = (SlotAttr, ViewAttr, ExternalAttr)


class Phase(StrEnum):
    """When an op runs in a decoding step (RLX's `Phase`)."""

    PROLOGUE = "prologue"
    """Loaded once before the steps: constants (and the arguments)."""
    STEADY = "steady"
    """The per-step work."""
    EPILOGUE = "epilogue"
    """After the last compute op, or after the last sampling op."""


@irdl_attr_definition
class PhaseAttr(EnumAttribute[Phase]):
    """The phase of an op: `#lir.phase<steady>`."""

    name = "lir.phase"

    @classmethod
    def parse_parameter(cls, parser: AttrParser) -> Phase:
        with parser.in_angle_brackets():
            return parser.parse_str_enum(Phase)

    def print_parameter(self, printer: Printer) -> None:
        printer.print_string(f"<{self.data.value}>")


SLOT_KEY = "lir.slot"
"""The attribute holding a value's placement (an array of them on multi-result ops)."""
PHASE_KEY = "lir.phase"
"""The attribute holding an op's phase."""

ATTRIBUTES = [SlotAttr, ViewAttr, ExternalAttr, PhaseAttr]
