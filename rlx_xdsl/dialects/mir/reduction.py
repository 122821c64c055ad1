"""MIR reductions and scans: reduce, softmax, cumsum, topk.

`mir.reduce`, `mir.softmax` and `mir.cumsum` keep their operand's dtype (the
interpreter accumulates f16/bf16 in f32 and rounds back once; integer sums wrap).
Axes may be negative;
inference normalises them against the operand's rank, so the same op text works
for any rank the axes fit.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType, UnitAttr, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    i64_array,
    i64_attr,
    require,
    require_float,
    tensor_type,
)
from rlx_xdsl.dialects.mir.attrs import ReduceKind, ReduceKindAttr
from rlx_xdsl.dialects.traits import DATA_MOVEMENT, REDUCTION, Sampling
from rlx_xdsl.shapes import DYNAMIC, normalize_axis, tensor


def unit_flag(value: bool) -> UnitAttr | None:
    """A UnitAttr property for a true flag; absent (None) for false."""
    return UnitAttr() if value else None


def require_orderable(op: RlxOperation, t: TensorType) -> None:
    """max/min/top-k compare elements, which complex numbers do not allow."""
    kind = dtypes.dtype_of(t.element_type).kind
    require(kind != "complex", op, lambda: f"cannot order elements of type {t.element_type}")


def require_not_bool(op: RlxOperation, t: TensorType) -> None:
    """i1 has no numeric sum; RLX itself casts conditions to f32 before reducing them."""
    kind = dtypes.dtype_of(t.element_type).kind
    require(
        kind != "bool", op, lambda: f"operand of type {t.element_type} must be cast to a numeric type first"
    )


@irdl_op_definition
class ReduceOp(RlxOperation):
    """Combines elements over `axes` with `kind` (`Reduce{op, axes, keep_dim}`).

    Reduced dims are dropped, or kept as size 1 with `keep_dim`. Integer `mean`
    divides the (64-bit) integer sum by the count, truncating toward zero as Rust's
    integer division does. NaN propagates through every kind; `max`/`min` order -0
    below +0 (IEEE 754-2019 `maximum`/`minimum`); `max`/`min` of zero
    elements, and an integer `mean` of zero elements, are run-time errors (the
    compiled backends refuse a static zero-size axis when lowering); a float
    `mean` of zero elements is NaN, a `sum` 0, a `prod` 1.
    """

    name = "mir.reduce"
    kind = prop_def(ReduceKindAttr)
    axes = prop_def(I64_ARRAY)
    keep_dim = opt_prop_def(UnitAttr)
    input = operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$kind $input `axes` `=` $axes (`keep_dim` $keep_dim^)? " + FUNCTIONAL

    def __init__(
        self,
        input: SSAValue,
        *,
        kind: str | ReduceKind = ReduceKind.SUM,
        axes: Sequence[int],
        keep_dim: bool = False,
    ):
        super().__init__(
            operands=[input],
            properties={
                "kind": ReduceKindAttr(ReduceKind(kind)),
                "axes": i64_array(axes),
                "keep_dim": unit_flag(keep_dim),
            },
        )

    def check_attributes(self) -> None:
        require(len(self.axes) > 0, self, "axes must not be empty")

    def normalized_axes(self) -> tuple[int, ...]:
        """The reduced axes in [0, rank), sorted; duplicates after normalising are rejected."""
        rank = tensor_type(self.input).get_num_dims()
        raw = self.axes.get_values()
        axes = [normalize_axis(a, rank) for a in raw]
        require(
            len(set(axes)) == len(axes),
            self,
            lambda: f"axes {list(raw)} name the same axis more than once",
        )
        return tuple(sorted(axes))

    def zero_size_refusal(self) -> str | None:
        """Why this reduction has no value on its static shape, or None: a `max`/`min`, or
        an integer `mean`, over a reduced axis of static size 0 (the interpreter's run-time
        error, known before running; the compiled backends refuse it when lowering)."""
        t = tensor_type(self.input)
        shape = t.get_shape()
        axes = self.normalized_axes()
        if not any(shape[a] == 0 for a in axes):
            return None
        kind = self.kind.data
        if kind in (ReduceKind.MAX, ReduceKind.MIN) or (
            kind == ReduceKind.MEAN and not dtypes.dtype_of(t.element_type).is_float
        ):
            return f"{kind.value} over zero elements (axes {list(axes)} of shape {list(shape)})"
        return None

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        require_not_bool(self, t)
        if self.kind.data in (ReduceKind.MAX, ReduceKind.MIN):
            require_orderable(self, t)
        axes = self.normalized_axes()
        if self.keep_dim is not None:
            shape = [1 if i in axes else d for i, d in enumerate(t.get_shape())]
        else:
            shape = [d for i, d in enumerate(t.get_shape()) if i not in axes]
        return [tensor(t.element_type, shape)]


class AxisOperation(RlxOperation):
    """Shared shape rule of softmax and cumsum: one `axis`, result type = operand type."""

    axis = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    result = result_def(TensorType)

    def normalized_axis(self) -> int:
        return normalize_axis(self.axis.value.data, tensor_type(self.input).get_num_dims())

    def check_operand(self, t: TensorType) -> None:
        """Element-type rule of the concrete op."""

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        self.check_operand(t)
        self.normalized_axis()
        return [t]


@irdl_op_definition
class SoftmaxOp(AxisOperation):
    """`exp(x - max) / sum(exp(x - max))` along `axis` (`Softmax{axis}`); floats only.

    Non-finite inputs follow IEEE arithmetic, as in PyTorch and ONNX: a slice holding
    NaN or `+inf`, or only `-inf`, gives NaN (`-inf` next to finite values gives 0).
    """

    name = "mir.softmax"
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$input `axis` `=` $axis " + FUNCTIONAL

    def __init__(self, input: SSAValue, *, axis: int = -1):
        super().__init__(operands=[input], properties={"axis": i64_attr(axis)})

    def check_operand(self, t: TensorType) -> None:
        require_float(self, t)


@irdl_op_definition
class CumsumOp(AxisOperation):
    """Running sum along `axis` (`Cumsum{axis, exclusive}`).

    With `exclusive` element i holds the sum of the elements before i (the first is 0),
    as ONNX CumSum's `exclusive = 1`. f16/bf16 accumulate in f32; integers wrap.
    """

    name = "mir.cumsum"
    exclusive = opt_prop_def(UnitAttr)
    traits = traits_def(Pure(), REDUCTION)
    assembly_format = "$input `axis` `=` $axis (`exclusive` $exclusive^)? " + FUNCTIONAL

    def __init__(self, input: SSAValue, *, axis: int, exclusive: bool = False):
        super().__init__(
            operands=[input],
            properties={"axis": i64_attr(axis), "exclusive": unit_flag(exclusive)},
        )

    def check_operand(self, t: TensorType) -> None:
        require_not_bool(self, t)


@irdl_op_definition
class TopkOp(RlxOperation):
    """The `k` largest elements along the last axis, largest first (`TopK{k}`).

    Results are the values (operand dtype) and their i64 indices; equal values keep
    their original order (lower index first), as ONNX TopK; -0.0 and 0.0 are equal.
    NaN counts as larger than every number (as `torch.topk`). With a `?` last dim,
    `k` larger than the run-time dim is a run-time error.
    """

    name = "mir.topk"
    k = prop_def(IntegerAttr[I64])
    input = operand_def(TensorType)
    values = result_def(TensorType)
    indices = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT, Sampling())
    assembly_format = "$input `k` `=` $k " + FUNCTIONAL

    def __init__(self, input: SSAValue, *, k: int):
        super().__init__(operands=[input], properties={"k": i64_attr(k)})

    def check_attributes(self) -> None:
        require(self.k.value.data >= 1, self, lambda: f"k must be at least 1, got {self.k.value.data}")

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        require(t.get_num_dims() >= 1, self, "operand must have rank at least 1, got a scalar")
        require_orderable(self, t)
        k, last = self.k.value.data, t.get_shape()[-1]
        require(last == DYNAMIC or k <= last, self, lambda: f"k = {k} exceeds the last dim {last}")
        shape = [*t.get_shape()[:-1], k]
        return [tensor(t.element_type, shape), tensor(i64, shape)]


OPS = [ReduceOp, SoftmaxOp, CumsumOp, TopkOp]
ATTRIBUTES: list[type] = []
