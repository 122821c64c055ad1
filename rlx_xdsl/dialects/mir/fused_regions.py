"""MIR kernels with a body: `mir.elementwise_region` and `mir.fused_matmul_epilogue`.

RLX encodes a fused elementwise chain as bytes (`ElementwiseRegion{chain,
input_modulus, ...}`) whose broadcasting reads `input[i % n]`, which is only
right for trailing broadcasts. Here the chain is real IR: a region of
elementwise MIR ops (ops declaring the `Elementwise` trait, and constants) on
the region's block arguments, ended by `mir.yield`, that the verifier checks like any
other code and the interpreter runs. Broadcasting is the ops' own NumPy rule,
and every input must broadcast to the region's one iteration shape.

`mir.fused_matmul_epilogue` (beyond RLX, as IREE and Inductor do) runs such a
chain on each element of a matmul's result before it is stored: bias,
activation, residual add, scale... in the matmul's kernel.

The kernels of RLX's newer fusion pipeline (its "FK" regions, rlx-fusion 0.2.6):

* a region's optional prologue, `prologue = resize_nearest_2x on i` (RLX's
  `RegionPrologue::ResizeNearest2x`, `prologue_input`): input `i` is a
  half-resolution NCHW tensor that the body reads upsampled 2x in H and W, so
  the body's argument `i` is typed `[N, C, 2H, 2W]`;
* `mir.transform_region` (RLX's `TransformRegion`): a chain of layout steps on
  one input as one kernel; the steps are RLX's `TransformStep`s (the 2x nearest
  resize);
* `mir.batch_elementwise_region` (RLX's `BatchElementwiseRegion`): one body
  applied to each of N slices, the results joined along axis 0 (RLX's horizontal
  fusion of batch pre-processing). RLX's per-input `scalar_input_mask` and
  `input_modulus` describe how the chain's other inputs broadcast; here those are
  the `shared` operands, handed whole to every slice's body and broadcast by the
  body's own NumPy rule (see docs/deviations.md). It may carry a prologue too (RLX's
  `BatchElementwiseRegion{prologue, prologue_input}`): each half-resolution image slice
  read upsampled (RLX's batch pre-processing of upsampled slices).

The region ops are `IsolatedFromAbove` (every value the body reads is a block
argument) and pure exactly when their bodies are.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, ArrayAttr, IntegerAttr, StringAttr, TensorType
from xdsl.dialects.utils import EnumAttribute
from xdsl.ir import Attribute, Region, SpacedOpaqueSyntaxAttribute, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    irdl_attr_definition,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.irdl.declarative_assembly_format import TypeDirective, irdl_custom_directive
from xdsl.traits import (
    ConstantLike,
    IsolatedFromAbove,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)
from xdsl.utils.str_enum import StrEnum

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    SignatureDirective,
    i64_attr,
    require,
    require_rank,
    signature_format,
    tensor_type,
)
from rlx_xdsl.dialects.mir.contraction import matmul_type
from rlx_xdsl.dialects.mir.regions import (
    YieldOp,
    check_region_args,
    fmt_types,
    region_yield,
    yielded_types,
)
from rlx_xdsl.dialects.traits import (
    COMPUTE,
    DATA_MOVEMENT,
    ELEMENTWISE,
    RegionOperandsInterface,
    RegionSignatureInterface,
    is_elementwise,
)
from rlx_xdsl.shapes import DYNAMIC, broadcasts_to, dims_match, fmt_shape


class Layout(StrEnum):
    """A layout step of a transform region or a region prologue (RLX's `TransformStep`,
    `RegionPrologue`)."""

    RESIZE_NEAREST_2X = "resize_nearest_2x"
    """`x[N, C, H, W]` read as `[N, C, 2H, 2W]`, each pixel a 2x2 block (as `mir.resize_nearest_2x`)."""


@irdl_attr_definition
class LayoutAttr(EnumAttribute[Layout], SpacedOpaqueSyntaxAttribute):
    """`#mir<layout resize_nearest_2x>`, or bare `resize_nearest_2x` in the op."""

    name = "mir.layout"


def layout_type(op: RlxOperation, step: Layout, t: TensorType, what: str) -> TensorType:
    """The type `step` gives a tensor of type `t` (the verifier's shape rule of each step)."""
    require_rank(op, t, 4, what)
    n, c, h, w = t.get_shape()
    double = lambda d: DYNAMIC if d == DYNAMIC else 2 * d  # noqa: E731
    return TensorType(t.element_type, (n, c, double(h), double(w)))


def check_elementwise_body(op: RlxOperation, region: Region) -> YieldOp:
    """Every op of the body but its `mir.yield` is an elementwise op without regions, or a constant."""
    terminator = region_yield(op, region, "body")
    for inner in region.block.ops:
        if inner is terminator or inner.has_trait(ConstantLike):
            continue
        require(
            is_elementwise(inner) and not inner.regions,
            op,
            f"body op '{inner.name}' is not elementwise (only ops with the Elementwise trait fuse)",
        )
    require(len(terminator.values) >= 1, op, "body must yield at least one value")
    return terminator


def check_inputs_broadcast(op: RlxOperation, values: Sequence[SSAValue], shape: Sequence[int], what: str) -> None:
    """Each value broadcasts (NumPy, one way) to the kernel's iteration `shape`."""
    for index, value in enumerate(values):
        value_shape = tensor_type(value).get_shape()
        require(
            broadcasts_to(value_shape, shape),
            op,
            f"{what} #{index} shape {fmt_shape(value_shape)} does not broadcast to the region's shape "
            f"{fmt_shape(shape)}",
        )


class PrologueMixin:
    """The optional prologue of a kernel with an elementwise body (RLX's `RegionPrologue`,
    `prologue_input`): body argument `prologue_input` reads its operand through the layout
    step `prologue` (`resize_nearest_2x`: a rank-4 `[N, C, H, W]` operand read as
    `[N, C, 2H, 2W]`). The op declares the `prologue` and `prologue_input` properties."""

    @property
    def prologue_index(self) -> int | None:
        """The body argument the prologue upsamples, or None without a prologue."""
        index = self.prologue_input  # type: ignore[attr-defined]
        return None if index is None else index.value.data

    @property
    def prologue_spec(self) -> tuple[Layout, int] | None:
        """`(step, body argument)` of the prologue, as the constructors take it, or None."""
        index, prologue = self.prologue_index, self.prologue  # type: ignore[attr-defined]
        return None if prologue is None or index is None else (prologue.data, index)

    def read_types(self, types: Sequence[Attribute | None]) -> list[Attribute | None]:
        """The body arguments' types from their operands' `types`: the prologue's upsampled."""
        types = list(types)
        spec = self.prologue_spec
        if spec is not None and 0 <= spec[1] < len(types) and types[spec[1]] is not None:
            types[spec[1]] = layout_type(self, spec[0], tensor_type(types[spec[1]]), "prologue input")  # type: ignore[arg-type]
        return types

    def check_prologue(self, count: int) -> None:
        """The prologue comes with its input, one of the `count` body arguments."""
        require(
            (self.prologue is None) == (self.prologue_input is None),  # type: ignore[attr-defined]
            self,  # type: ignore[arg-type]
            "prologue and its input are given together ('prologue = resize_nearest_2x on <input>')",
        )
        index = self.prologue_index
        require(
            index is None or 0 <= index < count,
            self,  # type: ignore[arg-type]
            lambda: f"prologue input {index} is not one of the {count} inputs",
        )


def prologue_properties(prologue: tuple[Layout, int] | None) -> dict[str, Attribute]:
    """The `prologue` and `prologue_input` properties of `(step, body argument)`."""
    if prologue is None:
        return {}
    return {"prologue": LayoutAttr(prologue[0]), "prologue_input": i64_attr(prologue[1])}


@irdl_op_definition
class ElementwiseRegionOp(PrologueMixin, RlxOperation, RegionOperandsInterface):
    """A fused chain of elementwise ops: one kernel, one pass over memory (`ElementwiseRegion`).

    The body receives the inputs as block arguments and yields the results.
    All yielded values share one shape, the iteration space, and every input
    broadcasts to it.

    With `prologue = resize_nearest_2x on i` (RLX's region prologue), input `i`
    is a rank-4 `[N, C, H, W]` tensor that the body receives upsampled, as
    `mir.resize_nearest_2x` of it: the body's argument `i` is `[N, C, 2H, 2W]`.
    `rlx-fuse-region-prologue` folds a single-use resize in front of a region (or a
    unary op) into it; a region keeps at most one prologue.

    Errors: a body op that is not elementwise (or a constant), yielded values of
    different shapes, an input that does not broadcast to them, a body argument
    whose type is not its input's (upsampled for the prologue's), a prologue
    without its input (or the reverse), an input index out of range, a prologue
    input that is not rank 4.
    """

    name = "mir.elementwise_region"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    prologue = opt_prop_def(LayoutAttr)
    prologue_input = opt_prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), ELEMENTWISE)
    assembly_format = (
        "` ` `(` $inputs `)` (`prologue` `=` $prologue^ `on` $prologue_input)? " + FUNCTIONAL + " $body"
    )

    def __init__(self, inputs: Sequence[SSAValue], body: Region, prologue: tuple[Layout, int] | None = None):
        super().__init__(
            operands=[inputs],
            regions=[body],
            result_types=[yielded_types(body)],
            properties=prologue_properties(prologue),
        )
        self.refresh_result_types()  # runs the body checks now, not only at verify time

    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        return self.inputs

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        """The inputs' types, the prologue's input read upsampled."""
        return self.read_types([v.type for v in self.inputs])  # type: ignore[return-value]

    @property
    def steps(self) -> int:
        """How many elementwise ops the body holds (RLX's chain length)."""
        return len(self.body.block.ops) - 1

    def infer_result_types(self) -> Sequence[Attribute]:
        self.check_prologue(len(self.inputs))
        check_region_args(self, self.body, "body", "input")
        terminator = check_elementwise_body(self, self.body)
        types = [v.type for v in terminator.values]
        shapes = {tuple(tensor_type(t).get_shape()) for t in types}
        require(len(shapes) == 1, self, f"yielded values {fmt_types(types)} must share one shape")
        check_inputs_broadcast(self, self.body.block.args, shapes.pop(), "input")
        return types


@irdl_op_definition
class FusedMatmulEpilogueOp(RlxOperation, RegionSignatureInterface):
    """`epilogue(lhs @ rhs, *extras)`: a matmul whose result passes through an elementwise body.

    The body's first argument is the matmul result (typed as `mir.matmul`
    would type it), the others are the `extras`; it yields one value of the
    matmul result's shape (an epilogue transforms each result element, it
    never enlarges the result), and each extra broadcasts to that shape.
    """

    name = "mir.fused_matmul_epilogue"
    lhs = operand_def(TensorType)
    rhs = operand_def(TensorType)
    extras = var_operand_def(TensorType)
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), COMPUTE)
    assembly_format = "$lhs `,` $rhs ` ` `(` $extras `)` " + FUNCTIONAL + " $body"

    def __init__(self, lhs: SSAValue, rhs: SSAValue, extras: Sequence[SSAValue], body: Region):
        super().__init__(operands=[lhs, rhs, extras], regions=[body])

    def product_type(self) -> TensorType:
        """The type of `lhs @ rhs`: the body's first argument."""
        return matmul_type(self, self.lhs, self.rhs)

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        return [self.product_type(), *(v.type for v in self.extras)]

    def infer_result_types(self) -> Sequence[Attribute]:
        product = self.product_type()
        actual, expected = tuple(self.body.block.arg_types), tuple(self.region_arg_types(self.body))
        require(
            actual == expected,
            self,
            f"body argument types {fmt_types(actual)} do not match the matmul result and extras "
            f"{fmt_types(expected)}",
        )
        terminator = check_elementwise_body(self, self.body)
        require(len(terminator.values) == 1, self, f"body must yield one value, got {len(terminator.values)}")
        result = tensor_type(terminator.values[0])
        result_shape, product_shape = result.get_shape(), product.get_shape()
        require(
            len(result_shape) == len(product_shape) and all(map(dims_match, result_shape, product_shape)),
            self,
            f"epilogue result shape {fmt_shape(result.get_shape())} differs from the matmul result shape "
            f"{fmt_shape(product.get_shape())}",
        )
        check_inputs_broadcast(self, self.extras, product.get_shape(), "extra")
        return [result]


@irdl_op_definition
class TransformRegionOp(RlxOperation):
    """A chain of layout steps on one input, as one kernel (RLX's `TransformRegion`).

    `steps` are applied in order; each is a `Layout` step (today the 2x nearest
    resize, `mir.resize_nearest_2x`'s rule: `x[N, C, H, W]` to `[N, C, 2H, 2W]`).
    At least one step; any dtype (data movement only, values are copied exactly).
    `rlx-mark-transform-regions` makes one of each single-consumer resize chain;
    `rlx-decompose-fusion-regions` (and the unfuse rule) turns it back into resizes.

    Errors: no steps, an unknown step name, an input a step cannot take (the resize
    needs rank 4).
    """

    name = "mir.transform_region"
    input = operand_def(TensorType)
    steps = prop_def(ArrayAttr[StringAttr])
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$input `steps` `=` $steps " + FUNCTIONAL

    def __init__(self, input: SSAValue, steps: Sequence[Layout]):
        super().__init__(operands=[input], properties={"steps": ArrayAttr([StringAttr(s) for s in steps])})

    @property
    def layouts(self) -> list[Layout]:
        return [Layout(step.data) for step in self.steps.data]

    def check_attributes(self) -> None:
        require(len(self.steps.data) >= 1, self, "a transform region needs at least one step")
        known = {str(layout) for layout in Layout}
        for step in self.steps.data:
            require(
                step.data in known,
                self,
                lambda: f"unknown transform step '{step.data}' (expected one of: {', '.join(sorted(known))})",
            )

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        for index, step in enumerate(self.layouts):
            t = layout_type(self, step, t, f"step #{index}'s operand")
        return [t]


@irdl_custom_directive
class BatchSignature(SignatureDirective):
    """The `(types) -> type` tail of `mir.batch_elementwise_region` (two operand groups)."""

    slices: TypeDirective
    shared: TypeDirective
    result_types: TypeDirective


@irdl_op_definition
class BatchElementwiseRegionOp(PrologueMixin, RlxOperation, RegionSignatureInterface):
    """One elementwise body applied to N slices, joined along axis 0 (RLX's `BatchElementwiseRegion`).

    `body(slice_i, *shared)` runs for each of the `slices` operands (all of one
    type, their dim 0 the slice length); the `shared` operands are read whole by
    every slice and broadcast to it by the body's NumPy rule (RLX's per-input
    `scalar_input_mask` / `input_modulus`). The body yields one value shaped like a
    slice; the result is `concat(body(slice_0), ..., body(slice_N-1), axis = 0)`.
    Dtypes are the body's (any the elementwise ops take). `rlx-fuse-batch-preprocess`
    makes one from identical regions over axis-0 slices feeding one concat;
    `rlx-decompose-fusion-regions` (and the unfuse rule) turns it back into one
    `mir.elementwise_region` per slice and a `mir.concat`.

    With `prologue = resize_nearest_2x on i` (RLX's `prologue`, `prologue_input`), body
    argument `i` (0: the slice, `1 + k`: shared input `k`) reads its operand upsampled
    2x in H and W, as `mir.elementwise_region`'s prologue: on the slice, each
    `[n, C, H, W]` slice is read as `[n, C, 2H, 2W]` and the result is `[N*n, C, 2H, 2W]`.

    Errors: no slices, slices of different types or of rank 0, body argument types
    that are not a slice's and the shared inputs' (as the prologue reads them), a body
    op that is not elementwise, a body yielding other than one value or a value not
    shaped like a slice as the body reads it, a prologue without its input (or the
    reverse), an input index out of range, a prologue input that is not rank 4.
    """

    name = "mir.batch_elementwise_region"
    slices = var_operand_def(TensorType)
    shared = var_operand_def(TensorType)
    result = result_def(TensorType)
    prologue = opt_prop_def(LayoutAttr)
    prologue_input = opt_prop_def(IntegerAttr[I64])
    body = region_def("single_block")
    irdl_options = (AttrSizedOperandSegments(as_property=True),)
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), ELEMENTWISE)
    custom_directives = (BatchSignature,)
    assembly_format = (
        "` ` `(` $slices `)` `shared` `(` $shared `)` (`prologue` `=` $prologue^ `on` $prologue_input)? "
        + signature_format(BatchSignature, ["slices", "shared"])
        + " $body"
    )

    def __init__(
        self,
        slices: Sequence[SSAValue],
        shared: Sequence[SSAValue],
        body: Region,
        prologue: tuple[Layout, int] | None = None,
    ):
        super().__init__(operands=[slices, shared], regions=[body], properties=prologue_properties(prologue))

    def slice_type(self) -> TensorType | None:
        """The one type of every slice: a dim is static where any slice has it static (None
        when the slices' element types, ranks or static dims differ)."""
        types = [tensor_type(v) for v in self.slices]
        if not types or len({(t.element_type, len(t.get_shape())) for t in types}) != 1:
            return None
        dims = []
        for sizes in zip(*(t.get_shape() for t in types)):
            static = {d for d in sizes if d != DYNAMIC}
            if len(static) > 1:
                return None
            dims.append(static.pop() if static else DYNAMIC)
        return TensorType(types[0].element_type, dims)

    def region_arg_types(self, region: Region) -> Sequence[Attribute]:
        """A slice's and the shared inputs' types, the prologue's input read upsampled."""
        return self.read_types([self.slice_type(), *(v.type for v in self.shared)])  # type: ignore[return-value]

    def infer_result_types(self) -> Sequence[Attribute]:
        require(len(self.slices) >= 1, self, "a batch region needs at least one slice")
        self.check_prologue(1 + len(self.shared))
        slice_type = self.slice_type()
        require(
            slice_type is not None, self, lambda: f"slices {fmt_types([v.type for v in self.slices])} must share one type"
        )
        require(slice_type.get_shape() != (), self, "slices must have a dim 0 to join along")
        actual, expected = tuple(self.body.block.arg_types), tuple(self.region_arg_types(self.body))
        require(
            actual == expected,
            self,
            lambda: f"body argument types {fmt_types(actual)} do not match a slice and the shared inputs "
            f"{fmt_types(expected)}",
        )
        terminator = check_elementwise_body(self, self.body)
        require(len(terminator.values) == 1, self, f"body must yield one value, got {len(terminator.values)}")
        result = tensor_type(terminator.values[0])
        shape = tensor_type(expected[0]).get_shape()  # the slice as the body reads it
        require(
            len(result.get_shape()) == len(shape) and all(map(dims_match, result.get_shape(), shape)),
            self,
            lambda: f"body result shape {fmt_shape(result.get_shape())} differs from the slice shape {fmt_shape(shape)}",
        )
        check_inputs_broadcast(self, self.body.block.args[1:], shape, "shared input")
        n, first = len(self.slices), shape[0]
        return [TensorType(result.element_type, (DYNAMIC if first == DYNAMIC else n * first, *shape[1:]))]


OPS = [ElementwiseRegionOp, FusedMatmulEpilogueOp, TransformRegionOp, BatchElementwiseRegionOp]
ATTRIBUTES: list[type] = [LayoutAttr]
