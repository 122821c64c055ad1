"""MIR region control flow: `mir.if`, `mir.while` and their terminator `mir.yield`.

RLX's `If` and `While` carry nested sub-graphs; here they carry regions. Captures
are explicit, as in RLX: every value a region uses arrives as an entry-block
argument (the ops are `IsolatedFromAbove`), so a region is a self-contained graph
that passes can inline, unroll or differentiate without free variables.

The ops are pure exactly when their regions are (`RecursiveMemoryEffect`), so DCE
removes an unused `mir.if` or `mir.while` whose bodies have no side effects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, Region, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    lazy_traits_def,
    operand_def,
    opt_prop_def,
    region_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.traits import (
    HasParent,
    IsolatedFromAbove,
    IsTerminator,
    Pure,
    RecursivelySpeculatable,
    RecursiveMemoryEffect,
)

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_positive,
    tensor_type,
)
from rlx_xdsl.dialects.traits import (
    DATA_MOVEMENT,
    OperandRoles,
    RegionOperandsInterface,
    Role,
)
from rlx_xdsl.shapes import dims_match, fmt_shape


def fmt_types(types: Sequence[Attribute]) -> str:
    """`(tensor<4xf32>, tensor<1xi1>)`, for diagnostics."""
    return "(" + ", ".join(str(t) for t in types) + ")"


def _yield_parents() -> tuple[type[RlxOperation], ...]:
    """The region ops whose regions `mir.yield` ends (the structured ones and the fused
    kernels with a body are defined in modules that import this one)."""
    from rlx_xdsl.dialects.mir import fused_regions, structured

    return (
        IfOp,
        WhileOp,
        structured.ScanOp,
        structured.ScanBackwardOp,
        structured.CustomFnOp,
        fused_regions.ElementwiseRegionOp,
        fused_regions.FusedMatmulEpilogueOp,
        fused_regions.BatchElementwiseRegionOp,
    )


@irdl_op_definition
class YieldOp(RlxOperation):
    """Ends a region of `mir.if`, `mir.while`, `mir.scan`, `mir.scan_backward`,
    `mir.custom_fn`, `mir.elementwise_region`, `mir.fused_matmul_epilogue` or
    `mir.batch_elementwise_region`, handing its operands to the parent op."""

    name = "mir.yield"
    values = var_operand_def(TensorType)
    traits = lazy_traits_def(lambda: (IsTerminator(), HasParent(*_yield_parents()), Pure()))
    assembly_format = "attr-dict ($values^ `:` type($values))?"

    def __init__(self, *values: SSAValue):
        super().__init__(operands=[values])

    def infer_result_types(self) -> Sequence[Attribute]:
        return []


def yielded_types(region: Region) -> list[Attribute]:
    """The types a region yields, or [] when it does not (yet) end with `mir.yield`.

    Variadic-result ops cannot leave their result count to the base class, so the
    constructors read it from here; `infer_result_types` then checks the regions.
    """
    block = region.blocks.first
    terminator = block.last_op if block is not None else None
    return [v.type for v in terminator.values] if isinstance(terminator, YieldOp) else []


def region_yield(op: RlxOperation, region: Region, what: str) -> YieldOp:
    """The `mir.yield` ending `region`'s single block."""
    require(len(region.blocks) == 1, op, lambda: f"{what} region must have exactly one block")
    terminator = region.block.last_op
    require(isinstance(terminator, YieldOp), op, lambda: f"{what} region must end with 'mir.yield'")
    assert isinstance(terminator, YieldOp)
    return terminator


def check_region_args(op: RegionOperandsInterface, region: Region, what: str, of: str) -> None:
    """The region's entry-block argument types must equal those of the operands it receives
    (as the op states them: `region_arg_types`)."""
    actual = region.block.arg_types
    expected = list(op.region_arg_types(region))
    require(
        tuple(actual) == tuple(expected),
        op,
        lambda: f"{what} region argument types {fmt_types(actual)} do not match the {of} types "
        f"{fmt_types(expected)}",
    )


def check_predicate(op: RlxOperation, value: SSAValue, what: str) -> None:
    """A predicate is a one-element tensor of i1 or a real numeric type (nonzero is true)."""
    t = tensor_type(value)
    kind = dtypes.dtype_of(t.element_type).kind
    require(
        kind != "complex",
        op,
        lambda: f"{what} must have an i1 or real numeric element type, got {t.element_type}",
    )
    require(
        all(dims_match(d, 1) for d in t.get_shape()),
        op,
        lambda: f"{what} must have exactly one element, got shape {fmt_shape(t.get_shape())}",
    )


@irdl_op_definition
class IfOp(RlxOperation, RegionOperandsInterface):
    """`pred ? then(captures) : else(captures)` (`If{then_branch, else_branch}`).

    Both regions take the captures as block arguments and yield values of the
    same types, which are the op's results. The predicate holds when its one
    element is nonzero (a NaN predicate is nonzero, so true).
    """

    name = "mir.if"
    pred = operand_def(TensorType)
    captures = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    then_region = region_def("single_block")
    else_region = region_def("single_block")
    traits = traits_def(
        RecursiveMemoryEffect(),
        RecursivelySpeculatable(),
        IsolatedFromAbove(),
        DATA_MOVEMENT,
        OperandRoles.of(pred=Role.PREDICATE),
    )
    assembly_format = (
        "$pred ` ` `(` $captures `)` " + FUNCTIONAL + " $then_region `else` $else_region"
    )
    REGION_SIGNATURES: ClassVar[dict[str, str]] = {
        "then_region": "(capture...) -> (result...)",
        "else_region": "(capture...) -> (result...)",
    }

    def __init__(
        self, pred: SSAValue, captures: Sequence[SSAValue], then_region: Region, else_region: Region
    ):
        super().__init__(
            operands=[pred, captures],
            regions=[then_region, else_region],
            result_types=[yielded_types(then_region)],
        )
        self.refresh_result_types()  # runs the region checks now, not only at verify time

    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        """Both branches receive the captures."""
        return self.captures

    def infer_result_types(self) -> Sequence[Attribute]:
        check_predicate(self, self.pred, "predicate")
        yielded = []
        for region, what in ((self.then_region, "then"), (self.else_region, "else")):
            terminator = region_yield(self, region, what)
            check_region_args(self, region, what, "capture")
            yielded.append(tuple(v.type for v in terminator.values))
        then_types, else_types = yielded
        require(len(then_types) >= 1, self, "regions must yield at least one value")
        require(
            then_types == else_types,
            self,
            lambda: f"then region yields {fmt_types(then_types)} but else region yields "
            f"{fmt_types(else_types)}",
        )
        return then_types


@irdl_op_definition
class WhileOp(RlxOperation, RegionOperandsInterface):
    """Loop while `cond(carried)` holds, `carried = body(carried)` (`While{cond, body, max_iterations}`).

    With `max_iterations = N` the body runs at most N times (RLX's bounded loop,
    which `unroll_while` needs). The results are the final carried values. The
    condition holds when its one element is nonzero (NaN is nonzero).
    """

    name = "mir.while"
    init = var_operand_def(TensorType)
    outputs = var_result_def(TensorType)
    max_iterations = opt_prop_def(IntegerAttr[I64])
    cond_region = region_def("single_block")
    body_region = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect(), IsolatedFromAbove(), DATA_MOVEMENT)
    assembly_format = (
        "` ` `(` $init `)` (`max_iterations` `=` $max_iterations^)? "
        + FUNCTIONAL
        + " `cond` $cond_region `do` $body_region"
    )
    REGION_SIGNATURES: ClassVar[dict[str, str]] = {
        "cond_region": "(carried...) -> (predicate)",
        "body_region": "(carried...) -> (carried...)",
    }

    def __init__(
        self,
        init: Sequence[SSAValue],
        cond_region: Region,
        body_region: Region,
        *,
        max_iterations: int | None = None,
    ):
        super().__init__(
            operands=[init],
            properties={"max_iterations": None if max_iterations is None else i64_attr(max_iterations)},
            regions=[cond_region, body_region],
            result_types=[[v.type for v in init]],
        )
        self.refresh_result_types()  # runs the region checks now, not only at verify time

    @property
    def iteration_limit(self) -> int | None:
        """`max_iterations` as a Python int, or None for an unbounded loop."""
        return None if self.max_iterations is None else self.max_iterations.value.data

    def region_operands(self, region: Region) -> Sequence[SSAValue]:
        """cond and body both receive the carried values."""
        return self.init

    def check_attributes(self) -> None:
        if self.iteration_limit is not None:
            require_positive(self, max_iterations=self.iteration_limit)

    def infer_result_types(self) -> Sequence[Attribute]:
        carried = tuple(v.type for v in self.init)
        require(len(carried) >= 1, self, "must carry at least one value")
        cond_yield = region_yield(self, self.cond_region, "cond")
        check_region_args(self, self.cond_region, "cond", "carried")
        require(
            len(cond_yield.values) == 1,
            self,
            lambda: f"cond region must yield exactly one value, got {len(cond_yield.values)}",
        )
        check_predicate(self, cond_yield.values[0], "cond region's yielded value")
        body_yield = region_yield(self, self.body_region, "body")
        check_region_args(self, self.body_region, "body", "carried")
        body_types = tuple(v.type for v in body_yield.values)
        require(
            body_types == carried,
            self,
            lambda: f"body region yields {fmt_types(body_types)} but the carried types are "
            f"{fmt_types(carried)}",
        )
        return carried


OPS = [IfOp, WhileOp, YieldOp]
ATTRIBUTES: list[type] = []
