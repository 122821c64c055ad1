"""Printing IR so that parsing it back gives every constant bit for bit.

xDSL prints a float element through a Python float: a NaN loses its payload (f16)
or its signalling bit, and a NaN splat is not recognised as a splat. `RlxPrinter`
prints dense float and complex constants from their stored bytes instead: NaN and
±inf as the hexadecimal bit pattern MLIR uses (`0x7FC00000`, read back by
`parser.RlxParser`), finite values by xDSL's shortest round-tripping form, and
more than 100 elements as a hexadecimal blob.

A dense attribute prints as it is stored, so that parsing gives back the same
attribute: one stored element for a larger shape (a splat, `dense.py`) prints as
one element, and an attribute that stores every element prints every element, even
when they are equal. xDSL prints the latter as a splat, which the parser stores once,
and xDSL's own verifiers read the stored elements (`linalg.conv_2d_nchw_fchw` needs
two strides: `dense<[1, 1]> : tensor<2xi64>`, not `dense<1>`). Everything else prints
as upstream does.

`print_ir(op)` is the text of an op with this printer; the tools print with it.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from io import StringIO
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ComplexType,
    DenseIntOrFPElementsAttr,
    IndexType,
    IntegerType,
    ModuleOp,
    TensorType,
)
from xdsl.ir import Attribute, Operation
from xdsl.printer import Printer
from xdsl.syntax_printer import SyntaxPrinter
from xdsl.targets.mlir import MLIRTarget

from rlx_xdsl import dtypes
from rlx_xdsl.support import memo

HEX_BLOB_ELEMENTS = 100
"""Constants with more elements print as one hexadecimal string (as in xDSL and MLIR)."""


class ExactConstants:
    """Printer mixin: dense float and complex constants print bit-exactly, and every
    dense attribute prints as many elements as it stores."""

    def print_attribute(self, attribute: Attribute) -> None:
        if isinstance(attribute, DenseIntOrFPElementsAttr):
            if _has_float_elements(attribute):
                self._print_dense_floats(attribute)
                return
            if _stores_equal_elements(attribute):
                self._print_equal_integers(attribute)
                return
        super().print_attribute(attribute)  # type: ignore[misc]

    def _print_equal_integers(self, attr: DenseIntOrFPElementsAttr) -> None:
        """Equal integers stored one by one, in full (xDSL would print one)."""
        import numpy as np

        printer: Printer = self  # type: ignore[assignment]
        printer.print_string("dense<")
        if len(attr) > HEX_BLOB_ELEMENTS:
            printer.print_string(f'"0x{attr.data.data.hex().upper()}"')
        else:
            self._print_nested(np.full(attr.get_shape(), attr.get_values()[0], dtype=object), attr)
        printer.print_string("> : ")
        printer.print_attribute(attr.get_type())

    def _print_dense_floats(self, attr: DenseIntOrFPElementsAttr) -> None:
        from rlx_xdsl.ir.dense import (  # numpy only when needed
            dense_to_numpy,
            stored_elements,
        )

        printer: Printer = self  # type: ignore[assignment]
        values = stored_elements(attr)
        printer.print_string("dense<")
        if values.size == 1:
            self._print_element(values.reshape(-1)[0], attr)
        elif values.size > HEX_BLOB_ELEMENTS:
            printer.print_string(f'"0x{attr.data.data.hex().upper()}"')
        elif values.size:
            self._print_nested(dense_to_numpy(attr), attr)
        printer.print_string("> : ")
        printer.print_attribute(attr.get_type())

    def _print_nested(self, array, attr: DenseIntOrFPElementsAttr) -> None:
        printer: Printer = self  # type: ignore[assignment]
        if array.ndim == 0:
            self._print_element(array.reshape(()), attr)
            return
        printer.print_string("[")
        for i, item in enumerate(array):
            if i:
                printer.print_string(", ")
            if array.ndim > 1:
                self._print_nested(item, attr)
            else:
                self._print_element(item, attr)
        printer.print_string("]")

    def _print_element(self, value, attr: DenseIntOrFPElementsAttr) -> None:
        import numpy as np

        printer: Printer = self  # type: ignore[assignment]
        element_type = attr.get_element_type()
        if isinstance(element_type, IntegerType | IndexType):
            printer.print_int(int(value), element_type)
        elif isinstance(element_type, ComplexType):
            part_type = element_type.element_type
            printer.print_string("(")
            self._print_float(np.float32(np.real(value)), part_type)
            printer.print_string(",")
            self._print_float(np.float32(np.imag(value)), part_type)
            printer.print_string(")")
        else:
            self._print_float(value, element_type)

    def _print_float(self, value, element_type: Attribute) -> None:
        import numpy as np

        printer: Printer = self  # type: ignore[assignment]
        scalar = np.asarray(value)
        with np.errstate(invalid="ignore"):  # casting a NaN half to f64 warns
            wide = scalar.astype(np.float64)
        if np.isfinite(wide):
            printer.print_float(float(wide), element_type)
            return
        unsigned = {2: np.uint16, 4: np.uint32, 8: np.uint64}[scalar.dtype.itemsize]
        bits = int(scalar.reshape(1).view(unsigned)[0])
        printer.print_string(f"0x{bits:0{scalar.dtype.itemsize * 2}X}")


class TypeTexts:
    """Printer mixin: a tensor type is printed once, then written again from its text.

    A graph repeats a few `tensor<…>` types on every line, and printing one through
    xDSL's printer costs a few dozen calls; the printer remembers each one's text (by
    identity first, then by value), for as long as it prints.
    """

    def print_attribute(self, attribute: Attribute) -> None:
        if type(attribute) is not TensorType or not memo.enabled():
            super().print_attribute(attribute)  # type: ignore[misc]
            return
        printer: Printer = self  # type: ignore[assignment]
        texts: dict = printer.__dict__.setdefault("_rlx_type_texts", {})
        entry = texts.get(id(attribute))
        if entry is None or entry[0] is not attribute:
            text = texts.get(attribute)
            if text is None:
                text = texts[attribute] = self._text_of(attribute)
            entry = texts[id(attribute)] = (attribute, text)  # the attribute stays alive: its id stays unique
        printer.print_string(entry[1])

    def _text_of(self, attribute: Attribute) -> str:
        printer: Printer = self  # type: ignore[assignment]
        stream, column = printer.stream, printer._current_column
        printer.stream = StringIO()
        try:
            super().print_attribute(attribute)  # type: ignore[misc]
            return printer.stream.getvalue()
        finally:
            printer.stream, printer._current_column = stream, column

    def print_string(self, text: str, *, indent: int | None = None) -> None:
        """Upstream's, with text on one line written straight to the stream."""
        if "\n" in text:
            super().print_string(text, indent=indent)  # type: ignore[misc]
            return
        printer: Printer = self  # type: ignore[assignment]
        printer._current_column += len(text)
        (printer.stream or sys.stdout).write(text)


class ElidedConstants:
    """Printer mixin: `elide_elements_if_larger = N` prints each non-splat dense constant of
    more than N elements as `dense_resource<__elided__>`, as MLIR's
    `--mlir-elide-elementsattrs-if-larger=N` does (for reading IR dumps, not parsing back)."""

    elide_elements_if_larger: int | None = None

    def print_attribute(self, attribute: Attribute) -> None:
        limit = self.elide_elements_if_larger
        if limit is not None and isinstance(attribute, DenseIntOrFPElementsAttr) and _elided(attribute, limit):
            printer: Printer = self  # type: ignore[assignment]
            printer.print_string("dense_resource<__elided__> : ")
            printer.print_attribute(attribute.type)
            return
        super().print_attribute(attribute)  # type: ignore[misc]


@dataclass(eq=False, repr=False)
class RlxPrinter(ElidedConstants, TypeTexts, ExactConstants, Printer):
    """xDSL's `Printer`, with constants printed bit-exactly and type texts remembered."""

    elide_elements_if_larger: int | None = None


def _elided(attr: DenseIntOrFPElementsAttr, limit: int) -> bool:
    count = len(attr)
    if count <= limit:
        return False
    data = attr.data.data
    size = len(data) // count
    return not (size and data == data[:size] * count)  # a splat stays (same bytes everywhere)


@dataclass(eq=False, repr=False)
class RlxSyntaxPrinter(ElidedConstants, ExactConstants, SyntaxPrinter):
    """xDSL's colouring `SyntaxPrinter`, with constants printed bit-exactly."""

    elide_elements_if_larger: int | None = None


@dataclass(frozen=True)
class RlxMLIRTarget(MLIRTarget):
    """`rlx-opt`'s `-t mlir` output: xDSL's MLIR target with `RlxPrinter`."""

    elide_elements_if_larger: int | None = None

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        cls = RlxSyntaxPrinter if self.syntax_highlight else RlxPrinter
        printer = cls(
            stream=output,
            print_generic_format=self.print_generic_format,
            print_properties_as_attributes=self.print_properties_as_attributes,
            print_debuginfo=self.print_debuginfo,
            elide_elements_if_larger=self.elide_elements_if_larger,
        )
        printer.print_op(module)
        printer.print_metadata(ctx.loaded_dialects)
        print("\n", file=output)


def print_ir(op: Operation, **options) -> str:
    """`op` as text (`options` as for xDSL's `Printer`, e.g. `print_generic_format=True`)."""
    stream = StringIO()
    RlxPrinter(stream=stream, **options).print_op(op)
    return stream.getvalue()


def _has_float_elements(attr: DenseIntOrFPElementsAttr) -> bool:
    element_type = attr.get_element_type()
    if isinstance(element_type, ComplexType):
        return dtypes.is_supported(element_type)
    return dtypes.is_supported(element_type) and dtypes.is_float(element_type)


def _stores_equal_elements(attr: DenseIntOrFPElementsAttr) -> bool:
    """An integer attribute storing more than one element, all equal (xDSL's splat text
    for it would read back as one stored element)."""
    if not isinstance(attr.get_element_type(), IntegerType | IndexType) or len(attr) < 2:
        return False
    values = attr.get_values()
    return values.count(values[0]) == len(values)
