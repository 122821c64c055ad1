"""The base class every RLX op derives from: type inference drives verification.

An op subclass implements two small hooks:

* `check_attributes()` raises `VerifyException` for out-of-range attributes;
* `infer_result_types()` returns the result types implied by the operand types
  and attributes (raising `VerifyException` for incompatible operands).

From these the base class provides the verifier (declared result types must
match the inferred ones, up to `?` dims), a constructor that infers result types
(`MatmulOp(a, b)` needs no result type), and re-inference for passes such as
`rlx-specialize` that change argument shapes.

The helpers below the class are shared by every op group: building properties
from Python values (`i64_attr`, `i64_array`, `I64_ARRAY`), the common tail of
assembly formats (`FUNCTIONAL`), and the `require_*` checks whose messages all
start with the quoted op name.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, NoneType, TensorType, i64
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import IRDLOperation, OptResultDef
from xdsl.irdl.declarative_assembly_format import (
    CustomDirective,
    ParsingState,
    PrintingState,
    TypeDirective,
    irdl_custom_directive,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import Rewriter
from xdsl.traits import OpTraitInvT
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.shapes import DYNAMIC, ShapeError, dims_match, fmt_shape
from rlx_xdsl.support.memo import BoundedMemo, enabled

_PENDING = NoneType()

_NOT_LOOKED_UP = object()

FUNCTIONAL = "attr-dict `:` functional-type(operands, results)"
"""The tail of every MIR assembly format: attributes, then the op's full signature."""

I64_ARRAY = DenseArrayBase.constr(i64)
"""Property constraint for int lists; prints as `[1, 0]` in a declarative format."""


class SignatureDirective(CustomDirective):
    """`(operand types) -> result type(s)` for ops with optional operands between others.

    xDSL's `functional-type(operands, results)` cannot assign types to operand
    groups sized by `AttrSizedOperandSegments`. Written after the operands, this
    directive knows how many operands each group received and hands out the
    listed types in order. The directive's parameters only tell xDSL's format
    checker which types it parses: `SegmentedSignature` takes
    `type(operands), type(results)` (enough when one operand is optional); an
    op with several optional operands declares a subclass naming each operand
    (see `fused.AttentionBlockSignature`) and builds its format with
    `signature_format`.
    """

    def parse(self, parser: Parser, state: ParsingState) -> None:
        start = parser.pos
        types = parser.parse_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        counts = [len(group) if group is not None else 0 for group in state.operands]
        if len(types) != sum(counts):
            parser.raise_error(
                f"expected {sum(counts)} operand types, got {len(types)}", start, parser.pos
            )
        parser.parse_punctuation("->")
        results_start = parser.pos
        results = parser.parse_optional_comma_separated_list(parser.Delimiter.PAREN, parser.parse_type)
        results = [parser.parse_type()] if results is None else results
        results_span = (results_start, parser.pos)
        offset = 0
        for index, count in enumerate(counts):
            state.operand_types[index] = types[offset : offset + count]
            offset += count
        if len(state.result_types) == 1:
            state.result_types[0] = results
        else:
            state.result_types = _result_groups(state.op_type, results, parser, results_span)

    def print(self, printer: Printer, state: PrintingState, op: IRDLOperation) -> None:
        state.print_whitespace(printer)
        with printer.in_parens():
            printer.print_list(op.operand_types, printer.print_attribute)
        printer.print_string(" -> ")
        if len(op.result_types) == 1:
            printer.print_attribute(op.result_types[0])
        else:
            with printer.in_parens():
                printer.print_list(op.result_types, printer.print_attribute)

    def is_present(self, op: IRDLOperation) -> bool:
        return True


def _result_groups(
    op_type: type[IRDLOperation], results: list[Attribute], parser: Parser, span: tuple[int, int]
) -> list[list[Attribute]]:
    """`results` dealt to the op's result definitions in order, one type each; optional
    results at the end take what is left (none when the list is short)."""
    defs = [d for _, d in op_type.get_irdl_definition().results]
    required = sum(1 for d in defs if not isinstance(d, OptResultDef))
    if not required <= len(results) <= len(defs):
        expected = f"{required} to {len(defs)}" if required < len(defs) else f"{required}"
        parser.raise_error(f"expected {expected} result types, got {len(results)}", *span)
    remaining = iter(results)
    spare = len(results) - required
    groups = []
    for d in defs:
        if isinstance(d, OptResultDef):
            groups.append([next(remaining)] if spare > 0 else [])
            spare -= 1
        else:
            groups.append([next(remaining)])
    return groups


@irdl_custom_directive
class SegmentedSignature(SignatureDirective):
    """`SignatureDirective` for ops with a single optional operand: `FUNCTIONAL_SEGMENTED`."""

    operand_types: TypeDirective
    result_types: TypeDirective


FUNCTIONAL_SEGMENTED = "attr-dict `:` custom<SegmentedSignature>(type(operands), type(results))"
"""`FUNCTIONAL` for ops with `AttrSizedOperandSegments` and one optional operand (list
`SegmentedSignature` in the op's `custom_directives`); the text is the same
`(operand types) -> result type`."""


def signature_format(directive: type[SignatureDirective], operands: Sequence[str]) -> str:
    """`FUNCTIONAL` for an op whose `directive` names each of `operands` (several optional)."""
    types = ", ".join(f"type(${name})" for name in operands)
    return f"attr-dict `:` custom<{directive.__name__}>({types}, type(results))"


def types_compatible(declared: Attribute, inferred: Attribute) -> bool:
    """Equal, or tensors equal up to dims that are `?` on either side."""
    if declared == inferred:
        return True
    if not (isinstance(declared, TensorType) and isinstance(inferred, TensorType)):
        return False
    if declared.element_type != inferred.element_type:
        return False
    ds, is_ = declared.get_shape(), inferred.get_shape()
    return len(ds) == len(is_) and all(map(dims_match, ds, is_))


_INFERRED: BoundedMemo[tuple[Attribute, ...]] = BoundedMemo(1 << 14)
"""Inferred result types by `InferenceKey`."""

_VERIFIED: BoundedMemo[bool] = BoundedMemo(1 << 14)
"""The `InferenceKey`s of ops whose declared result types matched the inferred ones."""


class InferenceKey:
    """Everything type inference and the attribute checks read of an op: its class, operand
    types, properties and declared result types (casts and `mir.iota` take their target
    from these).

    Attributes hash recursively in Python, so the key hashes itself once, when a memo
    first asks; comparing two keys compares their attributes, which is immediate when
    they are the same objects (an op unchanged since its key was made).
    """

    __slots__ = ("parts", "_hash")

    def __init__(self, parts: tuple) -> None:
        self.parts = parts
        self._hash: int | None = None

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(self.parts)
        return self._hash

    def __eq__(self, other: object) -> bool:
        return isinstance(other, InferenceKey) and self.parts == other.parts


def inference_key(op: RlxOperation) -> InferenceKey | None:
    """`op`'s `InferenceKey`, or None (do not remember) when the memos are off or the op
    has regions, whose bodies inference reads too."""
    if op.regions or not enabled():
        return None
    properties = tuple(op.properties.items())
    return InferenceKey(
        (
            type(op),
            tuple([operand.type for operand in op.operands]),
            tuple(sorted(properties)) if len(properties) > 1 else properties,
            tuple([result.type for result in op.results]),
        )
    )


class RlxOperation(IRDLOperation):
    """Common behaviour of HIR/MIR/LIR ops (not itself an op definition)."""

    def __init__(
        self,
        *,
        operands: Sequence[SSAValue | Sequence[SSAValue] | None] = (),
        properties: Mapping[str, Attribute | None] | None = None,
        attributes: Mapping[str, Attribute | None] | None = None,
        regions: Sequence[Region | None] | None = None,
        result_types: Sequence[Attribute] | None = None,
    ):
        """Build the op; when `result_types` is None they are inferred."""
        n_results = len(type(self).get_irdl_definition().results)
        super().__init__(
            operands=operands,
            properties=properties,
            attributes=attributes,
            regions=regions,
            result_types=result_types if result_types is not None else [_PENDING] * n_results,
        )
        if result_types is None:
            self.refresh_result_types()

    @classmethod
    def get_trait(cls, trait: type[OpTraitInvT] | OpTraitInvT) -> OpTraitInvT | None:
        """xDSL's lookup (a scan of the class's traits), remembered per class and trait type:
        passes ask every op for its precision class, views and effects, over and over."""
        if not isinstance(trait, type):
            return super().get_trait(trait)
        traits = cls.traits.traits  # a new set when a trait is added: the memo starts over
        known = cls.__dict__.get("_rlx_traits_by_type")
        if known is None or known[0] is not traits:
            known = (traits, {})
            setattr(cls, "_rlx_traits_by_type", known)
        found = known[1].get(trait, _NOT_LOOKED_UP)
        if found is _NOT_LOOKED_UP:
            found = known[1][trait] = super().get_trait(trait)
        return found

    # Hooks for subclasses -------------------------------------------------

    def check_attributes(self) -> None:
        """Raise VerifyException when an attribute is out of range."""

    def infer_result_types(self) -> Sequence[Attribute]:
        """The result types implied by operand types and attributes."""
        raise NotImplementedError(f"{self.name} does not implement type inference")

    def index_bound(self, operand: SSAValue) -> int | None:
        """How many ids `operand` may select from, where this op reads it as indices into a
        static dimension (class labels, gather indices, expert ids); None otherwise. Random
        inputs (`graph.random_inputs`) draw ids below it, so a drawn example stays in range."""
        return None

    # Shared machinery -------------------------------------------------------

    def inferred_types(self) -> Sequence[Attribute]:
        """Run attribute checks and inference, normalising helper errors.

        Remembered (`_INFERRED`) by everything inference reads (`inference_key`): an
        op like one seen before, or unchanged since, is not inferred again.
        """
        return self._inferred_types(inference_key(self))

    def _inferred_types(self, key: InferenceKey | None) -> Sequence[Attribute]:
        if key is not None and (known := _INFERRED.get(key)) is not None:
            return known
        self.check_attributes()
        try:
            inferred = tuple(self.infer_result_types())
        except (ShapeError, dtypes.UnsupportedDTypeError) as e:
            raise VerifyException(f"'{self.name}' {e.args[0] if e.args else e}") from e
        return _INFERRED.put(key, inferred) if key is not None else inferred

    def inferred_types_for(self, operand_types: Sequence[Attribute]) -> Sequence[Attribute]:
        """The result types inference gives when the operands have `operand_types`.

        The interpreter passes the shapes values have at run time, so `?` dims get
        the checks (and messages) the verifier gives static ones. Works on a detached
        copy of the op (regions left out); raises `VerifyException` like the verifier.
        """
        block = Block(arg_types=operand_types)
        probe = self.clone_without_regions(dict(zip(self.operands, block.args)), clone_name_hints=False)
        try:
            return probe.inferred_types()
        finally:
            probe.erase()

    def refresh_result_types(self) -> bool:
        """Replace each result's type with the inferred one; True if any changed."""
        changed = False
        for res, new_type in zip(self.results, self.inferred_types(), strict=True):
            if res.type != new_type:
                Rewriter.replace_value_with_new_type(res, new_type)
                changed = True
        return changed

    def verify_(self) -> None:
        """Inferred and declared result types agree (xDSL has checked the structure before).

        An op whose `inference_key` verified before passes at once: verifying after every
        pass costs, per op unchanged since it last verified, building its key and comparing
        it with the one it verified with (the same attribute objects), not its inference.
        """
        key = inference_key(self)
        if key is not None:
            if self.__dict__.get("_rlx_verified_key") == key:
                return  # unchanged since it last verified: compared by identity, nothing hashed
            if _VERIFIED.get(key):
                self._rlx_verified_key = key
                return
        self._require_rlx_dtypes("operand", self.operands)
        inferred = self._inferred_types(key)
        if len(inferred) != len(self.results):
            raise VerifyException(
                f"'{self.name}' expected {len(inferred)} results, got {len(self.results)}"
            )
        for index, (res, expected) in enumerate(zip(self.results, inferred)):
            if not types_compatible(res.type, expected):
                which = "result type" if len(self.results) == 1 else f"result #{index} type"
                raise VerifyException(
                    f"'{self.name}' inferred {which} {expected} does not match "
                    f"declared type {res.type}"
                )
        self._require_rlx_dtypes("result", self.results)  # e.g. a constant of i3
        if key is not None:
            _VERIFIED.put(key, True)
            self._rlx_verified_key = key

    def _require_rlx_dtypes(self, what: str, values: Sequence[SSAValue]) -> None:
        for value in values:
            element = getattr(value.type, "element_type", None)
            if element is not None and not dtypes.is_supported(element):
                raise VerifyException(
                    f"'{self.name}' {what} type {value.type} has an element type "
                    f"outside RLX's dtypes ({', '.join(d.name for d in dtypes.DTYPES)})"
                )


# Building properties from Python values -----------------------------------------------


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    """An `array<i64: ...>` property from a Python sequence (numpy ints included)."""
    return DenseArrayBase.from_list(i64, [int(v) for v in values])


# Checks for verifiers -----------------------------------------------------------------


def tensor_type(value: SSAValue | Attribute) -> TensorType:
    """The TensorType of a value (or a type), or a VerifyException naming it."""
    t = value.type if isinstance(value, SSAValue) else value
    if not isinstance(t, TensorType):
        raise VerifyException(f"expected a ranked tensor, got {t}")
    return t


def require(condition: bool, op: IRDLOperation, message: str | Callable[[], str]) -> None:
    """Raise `'<op>' <message>` as a VerifyException unless `condition` holds.

    A message that formats values is passed as a `lambda: f"..."`, built only when the
    check fails: formatting a type prints it, which would cost more than the check.
    """
    if not condition:
        text = message if isinstance(message, str) else message()
        raise VerifyException(f"'{op.name}' {text}")


def require_float(op: IRDLOperation, t: TensorType, what: str = "operand") -> None:
    require(
        dtypes.is_float(t.element_type),
        op,
        lambda: f"{what} must have a floating-point element type, got {t.element_type}",
    )


def require_rank(op: IRDLOperation, t: TensorType, rank: int | Sequence[int], what: str) -> None:
    ranks = (rank,) if isinstance(rank, int) else tuple(rank)
    require(
        t.get_num_dims() in ranks,
        op,
        lambda: f"{what} must have rank {' or '.join(map(str, ranks))}, got {fmt_shape(t.get_shape())}",
    )


def require_min_rank(op: IRDLOperation, t: TensorType, least: int, what: str) -> None:
    """For ops that take any number of leading (batch) dims before the ones they use."""
    require(
        t.get_num_dims() >= least,
        op,
        lambda: f"{what} must have rank >= {least}, got {fmt_shape(t.get_shape())}",
    )


def require_same_element_type(
    op: IRDLOperation,
    reference: TensorType,
    others: Mapping[str, TensorType],
    mismatch: str = "{what} must have element type {expected}, got {actual}",
) -> None:
    """Operands that are combined arithmetically must share the reference dtype.

    `mismatch` words the error for each group's conventions; it is formatted
    with the operand's name `what` and the `expected` and `actual` element types.
    """
    for what, t in others.items():
        require(
            t.element_type == reference.element_type,
            op,
            lambda: mismatch.format(what=what, expected=reference.element_type, actual=t.element_type),
        )


def require_index_type(op: IRDLOperation, t: TensorType, what: str = "indices") -> None:
    """Indices are integers or (RLX's encoding) floats; bool and complex are not indices."""
    kind = dtypes.dtype_of(t.element_type).kind
    require(
        kind in ("int", "uint", "float"),
        op,
        lambda: f"{what} must have an integer or floating-point element type, got {t.element_type}",
    )


def _require_at_least(op: IRDLOperation, least: int, values: Mapping[str, int]) -> None:
    for name, value in values.items():
        require(value >= least, op, lambda: f"{name} must be >= {least}, got {value}")


def require_non_negative(op: IRDLOperation, **values: int) -> None:
    """Reject negative sizes and offsets, naming the property."""
    _require_at_least(op, 0, values)


def require_positive(op: IRDLOperation, **values: int) -> None:
    """Reject counts and sizes below 1, naming the property."""
    _require_at_least(op, 1, values)


# Shared by inference and its messages -------------------------------------------------


def fmt_list(values: Sequence[int]) -> str:
    """`[1, -1]`: an attribute list as it appears in the assembly format."""
    return "[" + ", ".join(map(str, values)) + "]"


def refine_dim(a: int, b: int) -> int:
    """The better known of two dims that must agree: the static one if any."""
    return b if a == DYNAMIC else a


def sizes_from_like(op: IRDLOperation, like: SSAValue | None, like_dims: Any, rank: int) -> dict[int, int]:
    """The result dims that take their size from `like` at run time: result dim -> the
    size `like`'s dim `like_dims[i]` has in its type (`?` when dynamic). Checks that
    `like` and `like_dims` come together, one entry per result dim, each -1 or a dim of
    `like`."""
    require((like is None) == (like_dims is None), op, "`like` and `like_dims` must be given together")
    if like is None:
        return {}
    dims = like_dims.get_values()
    require(len(dims) == rank, op, lambda: f"like_dims has {len(dims)} entries for a result of rank {rank}")
    like_shape = tensor_type(like).get_shape()
    for d in dims:
        require(
            -1 <= d < len(like_shape),
            op,
            lambda: f"like_dims entry {d} is neither -1 nor a dim of `like` (rank {len(like_shape)})",
        )
    return {i: like_shape[d] for i, d in enumerate(dims) if d >= 0}


def like_at_run_time(op: IRDLOperation, like: Any) -> tuple[Sequence[int] | None, Sequence[int] | None]:
    """(`like`'s run-time shape, `op`'s `like_dims`), or `(None, None)` without a `like`:
    the arguments after the sizes of `shapes.sized_like`."""
    if like is None:
        return None, None
    return like.shape, op.like_dims.get_values()  # type: ignore[attr-defined]
