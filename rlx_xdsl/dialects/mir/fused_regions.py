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

Both ops are `IsolatedFromAbove` (every value the body reads is a block
argument) and pure exactly when their bodies are.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    ConstantLike,
    IsolatedFromAbove,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)

from rlx_xdsl.dialects.base import FUNCTIONAL, RlxOperation, require, tensor_type
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
    ELEMENTWISE,
    RegionOperandsInterface,
    RegionSignatureInterface,
    is_elementwise,
)
from rlx_xdsl.shapes import broadcasts_to, dims_match, fmt_shape


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


@irdl_op_definition
class ElementwiseRegionOp(RlxOperation, RegionOperandsInterface):
    """A fused chain of elementwise ops: one kernel, one pass over memory (`ElementwiseRegion`).

    The body receives the inputs as block arguments and yields the results.
    All yielded values share one shape, the iteration space, and every input
    broadcasts to it.
    """

    name = "mir.elementwise_region"
    inputs = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), RecursivelySpeculatable(), IsolatedFromAbove(), ELEMENTWISE)
    assembly_format = "` ` `(` $inputs `)` " + FUNCTIONAL + " $body"

    def __init__(self, inputs: Sequence[SSAValue], body: Region):
        super().__init__(operands=[inputs], regions=[body], result_types=[yielded_types(body)])
        self.refresh_result_types()  # runs the body checks now, not only at verify time

    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        return self.inputs

    @property
    def steps(self) -> int:
        """How many elementwise ops the body holds (RLX's chain length)."""
        return len(self.body.block.ops) - 1

    def infer_result_types(self) -> Sequence[Attribute]:
        check_region_args(self, self.body, "body", "input")
        terminator = check_elementwise_body(self, self.body)
        types = [v.type for v in terminator.values]
        shapes = {tuple(tensor_type(t).get_shape()) for t in types}
        require(len(shapes) == 1, self, f"yielded values {fmt_types(types)} must share one shape")
        check_inputs_broadcast(self, self.inputs, shapes.pop(), "input")
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


OPS = [ElementwiseRegionOp, FusedMatmulEpilogueOp]
ATTRIBUTES: list[type] = []
