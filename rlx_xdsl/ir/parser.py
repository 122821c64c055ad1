"""The MLIR parser of the pinned xDSL, made safe for any input and exact for literals.

It reads with `RlxLexer` (`lexer.py`), which fixes what the upstream lexer gets wrong on bad input.

`RlxParser` reads numeric literals into their type exactly (`literals.py`):
`dense<[0x7FC00000, 1.0]> : tensor<2xf32>` is `[nan, 1]` (upstream read the hex
as the integer 2143289344), decimals round once (also to bf16), a literal its type
cannot hold is an error at the literal, and a splat is stored as one element, so
`dense<0.0> : tensor<1x32x2048x128xf32>` costs 4 bytes, not 33 MB (`dense.py`
reads such an attribute back as a broadcast array).
"""

from __future__ import annotations

import math
import re
import struct
from typing import TYPE_CHECKING, NoReturn

from xdsl.context import Context
from xdsl.dialects.builtin import (
    AnyFloat,
    BytesAttr,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    UnitAttr,
    f64,
    i64,
)
from xdsl.ir import Attribute, Operation
from xdsl.parser import Parser
from xdsl.parser.generic_parser import ParserState
from xdsl.utils.exceptions import ParseError, VerifyException
from xdsl.utils.lexer import Input, Position, Span
from xdsl.utils.mlir_lexer import MLIRToken, MLIRTokenKind

from rlx_xdsl import dtypes
from rlx_xdsl.ir.lexer import RlxLexer, is_hex_literal
from rlx_xdsl.ir.suggest import close_matches, closest, suggestion
from rlx_xdsl.support import memo

if TYPE_CHECKING:  # numpy is imported only where literals are read
    import numpy as np


_PLAIN_TENSOR_TYPE = re.compile(r"tensor<(?:(?:[0-9]+|\?)x)*(?:[a-z][a-z0-9]*|complex<[a-z][a-z0-9]*>)>")
"""The spelling of a ranked tensor type over a builtin element type, without spaces or an
encoding (`tensor<1x?x64xf32>`): the types a graph repeats on every line."""


class RlxParser(Parser):
    """xDSL's `Parser` with `RlxLexer`, exact numeric literals, and a memo of types.

    A graph spells the same few `tensor<…>` types on every line (about 3.6 per MIR op),
    and building one (with its shape and its verifier) costs more than the rest of the
    line. The parser remembers each plain tensor type it parsed by its spelling: the
    same spelling gives the same attribute object, which is sound because attributes
    are immutable. The memo lives as long as the parser, so memory stays bounded.
    """

    def __init__(self, ctx: Context, text: str, name: str = "<unknown>"):
        super().__init__(ctx, "", name)
        self._parser_state = ParserState(RlxLexer(Input(text, name)))
        self._types: dict[str, Attribute] = {}
        self._op_name_start: Position = 0
        """Where the name of the op being parsed starts (for an unknown op's error)."""

    def parse_optional_unit_attr(self) -> Attribute | None:
        """`unit`, and `null` as its synonym: the issue-tracker spelling of a replicated
        dimension in `rlx.sharding = ["data", null]` (JSON/JAX's None). It prints as `unit`,
        which every MLIR parser reads."""
        token = self._current_token
        if token.kind == MLIRTokenKind.BARE_IDENT and token.span.text == "null":
            self._consume_token()
            return UnitAttr()
        return super().parse_optional_unit_attr()

    def parse_optional_type(self) -> Attribute | None:
        token = self._current_token
        if token.kind != MLIRTokenKind.BARE_IDENT or not memo.enabled():
            return super().parse_optional_type()
        content = self.lexer.input.content
        match = _PLAIN_TENSOR_TYPE.match(content, token.span.start)
        if match is None:
            return super().parse_optional_type()
        spelling = match.group()
        known = self._types.get(spelling)
        if known is not None:
            self._resume_from(match.end())
            return known
        parsed = super().parse_optional_type()
        after = self._current_token.span.start
        if parsed is not None and after >= match.end() and not content[match.end() : after].strip():
            self._types[spelling] = parsed  # parsed exactly the spelling: the next one is a hit
        return parsed

    # Unknown ops: at the op name, with the closest known name ---------------------------

    def _parse_op_result_list(self) -> list[tuple[Span, int]]:
        results = super()._parse_op_result_list()
        self._op_name_start = self._current_token.span.start  # the op name comes next
        return results

    def _get_op_by_name(self, name: str) -> type[Operation]:
        op_type = self.ctx.get_optional_op(name, dialect_stack=self._parser_state.dialect_stack)
        if op_type is not None:
            return op_type
        start = self._op_name_start
        message = f"Operation {name} is not registered{suggestion(self._closest_op(name))}"
        raise ParseError(Span(start, start + 1, self.lexer.input), message)

    def _closest_op(self, name: str) -> str | None:
        """The known op `name` most likely misspells: compared by the part after the
        dialect within its dialect (`mir.addd`: `mir.add`); with a misspelt dialect, the
        same op in the closest dialect that has it (`mri.add`: `mir.add`); without a
        dialect (`retrun` in a `func.func`), among the ops of the dialect being parsed."""
        if "." not in name:
            stack = self._parser_state.dialect_stack
            ops = self._dialect_ops(stack[-1]) if stack else []
            return closest(name, [op.split(".", 1)[1] for op in ops])
        dialect, rest = name.split(".", 1)
        known = list(self.ctx.registered_dialect_names)
        if dialect in known:
            match = closest(rest, [op.split(".", 1)[1] for op in self._dialect_ops(dialect)])
            return f"{dialect}.{match}" if match is not None else None
        for other in close_matches(dialect, known):
            if f"{other}.{rest}" in self._dialect_ops(other):
                return f"{other}.{rest}"
        return None

    def _dialect_ops(self, dialect: str) -> list[str]:
        if dialect not in self.ctx.registered_dialect_names:
            return []
        if dialect not in {d.name for d in self.ctx.loaded_dialects}:
            self.ctx.load_registered_dialect(dialect)
        return [op.name for d in self.ctx.loaded_dialects if d.name == dialect for op in d.operations]

    def _parse_token(self, expected_kind: MLIRTokenKind, error_msg: str) -> MLIRToken:
        """Upstream's, with its context-only messages (" in block definition") completed
        into what was expected and what was found."""
        if error_msg.startswith(" ") and self._current_token.kind != expected_kind:
            what = _TOKEN_NAMES.get(expected_kind, expected_kind.name.lower().replace("_", " "))
            self.raise_error(f"expected {what}{error_msg}, found {_found(self._current_token)}")
        return super()._parse_token(expected_kind, error_msg)

    # Scalar attributes: `1.5 : f16`, `300 : i8` ------------------------------------------

    def parse_optional_builtin_int_or_float_attr(self) -> IntegerAttr | FloatAttr | None:
        """`1.5 : f16`, `0x7FC00000 : f32`, `300 : i8`, or an untyped number (f64/i64).

        Upstream's version, with values read exactly and out-of-range literals
        reported at the literal instead of raising from the attribute's constructor.
        Only a float of a type narrower than f64 needs `literals` (and numpy).
        """
        if (flag := self.try_parse_builtin_boolean_attr()) is not None:
            return flag
        start = self._current_token.span.start
        if (value := self.parse_optional_number()) is None:
            return None
        text = "".join(self.lexer.input.content[start : self._literal_end(start)].split())
        type = self._parse_attribute_type() if self._current_token.kind == MLIRTokenKind.COLON else None
        if type is None:
            type = f64 if isinstance(value, float) else i64
        try:
            if isinstance(type, IntegerType | IndexType):
                if isinstance(value, float):
                    self._literal_error(start, f"float literal {text} for integer type {type}")
                if dtypes.is_supported(type):
                    low, high = dtypes.literal_range(type)
                    if not low <= value <= high:
                        self._literal_error(start, f"integer literal {text} is out of range for {type} [{low}, {high}]")
                return IntegerAttr(value, type)
            if type == f64 and not is_hex_literal(text):
                if math.isinf(value):
                    self._literal_error(start, f"float literal {text} is out of range for f64")
                return FloatAttr(float(value), type)
            if dtypes.is_supported(type) and dtypes.is_float(type):
                return FloatAttr(self._float_value(text, type, start), type)
            if isinstance(type, AnyFloat):  # float types outside RLX's dtypes
                _require_printable(type, start, self)
                if is_hex_literal(text):
                    return FloatAttr(next(type.iter_unpack(int(text, 16).to_bytes(type.compile_time_size, "little"))), type)
                return FloatAttr(float(value), type)
        except (VerifyException, OverflowError, ValueError) as e:
            self._literal_error(start, f"literal {text} does not fit {type}: {describe_error(e)}")
        self._literal_error(start, f"a number literal cannot have type {type}")

    def _float_value(self, text: str, type: Attribute, start: Position) -> float:
        from rlx_xdsl.ir import literals

        try:
            return float(literals.float_values([text], type)[0])
        except literals.LiteralError as e:
            self._literal_error(start, str(e))

    def _literal_end(self, start: Position) -> Position:
        """The end of the number literal starting at `start` (a sign, then one token)."""
        lexer = RlxLexer(self.lexer.input)
        lexer.pos = start
        token = lexer.lex()
        if token.kind == MLIRTokenKind.MINUS:
            token = lexer.lex()
        return token.span.end

    # Dense elements: `dense<[1.0, 0x7FC00000]> : tensor<2xf32>` ---------------------------

    def parse_dense_int_or_fp_elements_attr(self, type) -> DenseIntOrFPElementsAttr:
        self.parse_punctuation("<", " in dense attribute")
        start = self._current_token.span.start
        contents: str | tuple[list, list[int]] | None = None
        if self.parse_optional_punctuation(">") is None:
            hex_blob = self.parse_optional_str_literal()
            contents = hex_blob if hex_blob is not None else self._parse_tensor_literal()
            self.parse_punctuation(">", " in dense attribute")
        if type is None:
            self.parse_punctuation(":", " in dense attribute")
            type = self._parse_dense_literal_type()
        if not dtypes.is_supported(type.element_type):
            return self._upstream_dense(type, contents, start)
        from rlx_xdsl.ir import literals

        if contents is None:
            return self._dense_from_array(type, literals.empty(type.element_type), start)
        if isinstance(contents, str):
            return self._dense_from_hex(type, contents, start)
        elements, shape = contents
        if shape and list(type.get_shape()) != shape:
            self._literal_error(start, f"dense literal has shape {shape}, but its type {type} has shape {list(type.get_shape())}")
        try:
            values = literals.element_values(type.element_type, [e.value for e in elements], [e.span.text for e in elements])
        except literals.LiteralError as e:
            self._literal_error(elements[e.index].span.start, str(e))
        return self._dense_from_array(type, values, start)

    def _parse_optional_complex(self):
        """`(re, im)`; unlike upstream, `(1.0, 0x7FC00000)` may mix literal kinds (each
        part is read by its own text, see `_element_values`)."""
        if self._current_token.kind != MLIRTokenKind.L_PAREN:
            return None
        start = self._consume_token(MLIRTokenKind.L_PAREN).span.start
        real, _ = self._parse_bool_int_or_float()
        self.parse_punctuation(",")
        imag, _ = self._parse_bool_int_or_float()
        end = self._consume_token(MLIRTokenKind.R_PAREN).span.end
        return (real, imag), Span(start, end, self.lexer.input)

    def _dense_from_hex(self, type, blob: str, start: Position) -> DenseIntOrFPElementsAttr:
        try:
            data = bytes.fromhex(blob[2:]) if blob[:2].lower() == "0x" else None
        except ValueError:
            data = None
        if data is None:
            self._literal_error(start, "a dense string literal must be hexadecimal data: \"0x...\"")
        size = type.element_type.compile_time_size if dtypes.dtype_of(type.element_type).kind != "bool" else 1
        count = math.prod(type.get_shape())
        if len(data) not in (size, size * count):
            self._literal_error(
                start,
                f"hexadecimal dense literal has {len(data)} bytes; {type} needs {size * count} "
                f"(or {size} for a splat)",
            )
        return DenseIntOrFPElementsAttr(type, BytesAttr(data if count != 0 else b""))

    def _dense_from_array(self, type, values, start: Position) -> DenseIntOrFPElementsAttr:
        """The attribute of `type` holding `values` (one value: a splat, stored once)."""
        from rlx_xdsl.ir import literals

        count = math.prod(type.get_shape())
        if values.size not in (1, count):
            self._literal_error(start, f"dense literal has {values.size} elements, but its type {type} has {count}")
        return DenseIntOrFPElementsAttr(type, BytesAttr(literals.element_bytes(values, count)))

    def _upstream_dense(self, type, contents, start: Position) -> DenseIntOrFPElementsAttr:
        """Element types outside RLX's dtypes (index, i128, f80, ...): xDSL's conversions,
        with a splat stored once here too (upstream would expand it element by element)."""
        element = type.element_type
        try:
            if contents is None:
                return DenseIntOrFPElementsAttr(type, BytesAttr(b""))
            if isinstance(contents, str):
                return DenseIntOrFPElementsAttr(type, BytesAttr(bytes.fromhex(contents[2:])))
            elements, shape = contents
            if shape and list(type.get_shape()) != shape:
                self._literal_error(start, f"dense literal has shape {shape}, but its type {type} has shape {list(type.get_shape())}")
            values = [e.to_type(self, element) for e in elements]
            if isinstance(element, IntegerType):
                values = [element.get_normalized_value(v) for v in values]
            return DenseIntOrFPElementsAttr(type, BytesAttr(element.pack(values)))
        except NotImplementedError:
            self._literal_error(start, f"dense literals of element type {element} are not supported")
        except (OverflowError, ValueError, VerifyException, struct.error) as e:
            self._literal_error(start, f"invalid dense literal for {type}: {describe_error(e)}")

    def _literal_error(self, start: Position, message: str) -> NoReturn:
        raise ParseError(Span(start, start + 1, self.lexer.input), message)


_TOKEN_NAMES = {
    MLIRTokenKind.CARET_IDENT: "a block label (^name)",
    MLIRTokenKind.PERCENT_IDENT: "an SSA value (%name)",
    MLIRTokenKind.AT_IDENT: "a symbol (@name)",
    MLIRTokenKind.BARE_IDENT: "an identifier",
    MLIRTokenKind.STRING_LIT: "a string literal",
}


def _found(token: MLIRToken) -> str:
    if token.kind == MLIRTokenKind.EOF:
        return "the end of the input"
    return f"'{token.text}'"


def _require_printable(type: AnyFloat, start: Position, parser: RlxParser) -> None:
    """Reject float types whose values xDSL cannot store or print (f80, f128)."""
    try:
        type.pack([0.0])
    except NotImplementedError:
        parser._literal_error(start, f"literals of type {type} are not supported")


def describe_error(error: Exception) -> str:
    return str(error.args[0]) if error.args else type(error).__name__


def parse_array_literal(text: str, element_type: Attribute) -> tuple[np.ndarray, list[int]]:
    """A value written as the body of MLIR's `dense<...>` (`1.0`, `[1, 2, 3]`,
    `[[1, 2], [3, 4]]`, `true`, `0x7FC00000`, `(1.0, 2.0)`), read exactly as the
    parser reads a dense literal of `element_type`: its elements (flat) and its
    shape (`[]` for a single value). Errors are `ParseError`s at offsets of `text`.
    """
    from rlx_xdsl.ir import literals

    parser = RlxParser(Context(), text, "<value>")
    try:
        elements, shape = parser._parse_tensor_literal()
    except ParseError as e:
        if e.msg.startswith("Tensor literal has inconsistent ranks"):  # xDSL's words for a ragged list
            raise ParseError(e.span, "the nested lists differ in length or depth") from None
        raise
    if parser._current_token.kind != MLIRTokenKind.EOF:
        parser.raise_error(f"expected the end of the value, found {_found(parser._current_token)}")
    try:
        values = literals.element_values(element_type, [e.value for e in elements], [e.span.text for e in elements])
    except literals.LiteralError as e:
        raise ParseError(elements[e.index].span, str(e)) from None
    return values, shape
