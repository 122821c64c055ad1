"""Recipes of the MIR kernels with a body (elementwise regions, matmul epilogues, batch
regions) and of transform regions.

Bodies are short chains of elementwise ops that keep values finite (no
log/sqrt of arbitrary data); region inputs come from the pool and broadcast
together, so the region's inputs include NumPy broadcasts such as `[4, 1]`
into `[4, 8]`.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import (
    AbsOp,
    AddOp,
    CompareOp,
    MaxOp,
    MulOp,
    NegOp,
    ReluOp,
    SigmoidOp,
    SiluOp,
    SubOp,
    TanhOp,
    WhereOp,
)
from rlx_xdsl.dialects.mir.fused_regions import (
    BatchElementwiseRegionOp,
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
    Layout,
    TransformRegionOp,
)
from rlx_xdsl.registry import OpClass
from rlx_xdsl.shapes import broadcast_shapes, broadcasts_to
from rlx_xdsl.testing.graphgen.recipes import RECIPES
from rlx_xdsl.testing.graphgen.state import MAX_DIM, GraphState
from rlx_xdsl.testing.graphgen.values import (
    broadcasts,
    element_type,
    float_min_rank,
    is_float,
    rank,
    shape_of,
)

UNARY = (NegOp, AbsOp, ReluOp, TanhOp, SigmoidOp, SiluOp)
BINARY = (AddOp, SubOp, MulOp, MaxOp)


def body_chain(s: GraphState, rb: GraphBuilder, values: Sequence[SSAValue]) -> SSAValue:
    """Combine every value with binary ops, then 0-2 unary ops, sometimes a compare + where."""
    emit = lambda op_class, *operands, **props: rb.emit(op_class(*operands, **props))
    result = values[0]
    for value in values[1:]:
        result = emit(s.choice(BINARY), result, value)
    for _ in range(s.integer(0, 2)):
        result = emit(s.choice(UNARY), result)
    if s.flag():
        positive = emit(CompareOp, result, values[-1], predicate=s.choice(("gt", "le")))
        result = emit(WhereOp, positive, result, values[-1])
    return result


@RECIPES.register(ElementwiseRegionOp)
def elementwise_region(s: GraphState, op: OpClass) -> None:
    """1-3 float pool values of one dtype that broadcast together, fused into one region."""
    first = s.need(lambda v: is_float(v))
    et = element_type(first)
    inputs = [first]
    for _ in range(s.integer(0, 2)):
        shape = broadcast_shapes(*(shape_of(v) for v in inputs))
        inputs.append(s.partner(shape, lambda v: is_float(v) and element_type(v) == et))
        if element_type(inputs[-1]) != et or not broadcasts(shape_of(inputs[-1]), shape):
            inputs.pop()
    s.produce(s.builder.elementwise_region(inputs, lambda rb, *args: body_chain(s, rb, args)))


@RECIPES.register(FusedMatmulEpilogueOp)
def fused_matmul_epilogue(s: GraphState, op: OpClass) -> None:
    """`x @ w` then a chain with a bias `[n]` and sometimes a residual of the result's shape."""
    x = s.need(float_min_rank(2))
    k, et = shape_of(x)[-1], element_type(x)
    n = s.integer(1, MAX_DIM)
    w = s.operand((k, n), et, param=True)
    out_shape = (*shape_of(x)[:-1], n)
    extras = [s.operand((n,), et, param=True)]
    if s.flag():
        extras.append(s.operand(out_shape, et))
    s.produce(s.builder.matmul_epilogue(x, w, extras, lambda rb, acc, *args: body_chain(s, rb, [acc, *args])))


@RECIPES.register(TransformRegionOp)
def transform_region(s: GraphState, op: OpClass) -> None:
    """1-2 nearest 2x resizes of any rank-4 value, of any dtype."""
    x = s.pick(lambda v: rank(v) == 4) or s.operand(s.shape(4, 4))
    s.emit(op, x, [Layout.RESIZE_NEAREST_2X] * s.integer(1, 2))


@RECIPES.register(BatchElementwiseRegionOp)
def batch_elementwise_region(s: GraphState, op: OpClass) -> None:
    """1-3 slices of one float type (the same value may repeat), 0-2 shared inputs of their
    dtype that broadcast to a slice, and a chain over each slice and the shared inputs."""
    first = s.need(lambda v: is_float(v) and rank(v) >= 1)
    shape, et = shape_of(first), element_type(first)
    slices = [first, *(s.operand(shape, et) for _ in range(s.integer(0, 2)))]
    shared = []
    for _ in range(s.integer(0, 2)):
        value = s.partner(shape, lambda v: is_float(v) and element_type(v) == et)
        if element_type(value) == et and broadcasts_to(shape_of(value), shape):
            shared.append(value)
    s.produce(s.builder.batch_elementwise_region(slices, shared, lambda rb, *args: body_chain(s, rb, args)))
