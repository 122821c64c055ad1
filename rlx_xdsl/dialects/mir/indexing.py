"""MIR indexing ops: gather, scatter_add and dynamic_update_slice.

RLX encodes indices as f32 tensors, so gather and scatter_add accept floating-point index
tensors (truncated toward zero when run) as well as integer ones. An index in
`[-n, 0)` counts from the end (`n` is added, as numpy, ONNX Gather and PyTorch
indexing do), identically in the interpreter and the linalg and JAX lowerings.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import irdl_op_definition, operand_def, prop_def, result_def, traits_def, var_operand_def
from xdsl.traits import Pure

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    RlxOperation,
    i64_attr,
    require,
    require_index_type,
    require_min_rank,
    require_non_negative,
    require_rank,
    require_same_element_type,
    tensor_type,
)
from rlx_xdsl.dialects.traits import DATA_MOVEMENT, OperandRoles, Role
from rlx_xdsl.shapes import DYNAMIC, dims_match, fmt_shape, normalize_axis, tensor


class IndexedOperation(RlxOperation):
    """What gather and scatter_add share: the check of their `indices` operand."""

    def index_type(self) -> TensorType:
        """The type of `indices`, checked to be an index type."""
        t = tensor_type(self.indices)
        require_index_type(self, t)
        return t


@irdl_op_definition
class GatherOp(IndexedOperation):
    """Picks slices of `table` along `axis` at `indices`, as `numpy.take` (`Gather{axis}`).

    The result shape is `table.shape[:axis] + indices.shape + table.shape[axis+1:]`.
    Float indices truncate toward zero; with `n = table.shape[axis]`, an index in
    `[-n, 0)` counts from the end (`-1` is the last slice, as in numpy and ONNX
    `Gather`); one outside `[-n, n)` (or NaN) is a run-time error naming the op.
    """

    name = "mir.gather"
    table = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), DATA_MOVEMENT, OperandRoles.of(indices=Role.INDEX))
    assembly_format = "$table `,` $indices `axis` `=` $axis " + FUNCTIONAL

    def __init__(self, table: SSAValue, indices: SSAValue, *, axis: int = 0):
        super().__init__(operands=[table, indices], properties={"axis": i64_attr(axis)})

    def index_bound(self, operand: SSAValue) -> int | None:
        """Indices select along `axis` of the table."""
        shape = tensor_type(self.table).get_shape()
        if operand is not self.indices or not shape:
            return None
        size = shape[self.axis.value.data % len(shape)]
        return None if size == DYNAMIC else size

    def infer_result_types(self) -> Sequence[Attribute]:
        table, indices = tensor_type(self.table), self.index_type()
        shape = table.get_shape()
        axis = normalize_axis(self.axis.value.data, len(shape))
        return [tensor(table.element_type, [*shape[:axis], *indices.get_shape(), *shape[axis + 1 :]])]


@irdl_op_definition
class ScatterAddOp(IndexedOperation):
    """Sums rows of `updates[M, ...]` into `dim_size` zero rows at `indices[M]` (`ScatterAdd`).

    RLX keeps the output shape on the node; here `dim_size` carries the one
    dim that cannot be inferred from the operands. Indices follow `mir.gather`'s
    rule (in `[-dim_size, dim_size)`, a negative one counting from the end); f16/bf16 updates accumulate in f32 and the sums round once.
    """

    name = "mir.scatter_add"
    updates = operand_def(TensorType)
    indices = operand_def(TensorType)
    result = result_def(TensorType)
    dim_size = prop_def(IntegerAttr[I64])
    traits = traits_def(Pure(), DATA_MOVEMENT, OperandRoles.of(indices=Role.INDEX))
    assembly_format = "$updates `,` $indices `dim_size` `=` $dim_size " + FUNCTIONAL

    def __init__(self, updates: SSAValue, indices: SSAValue, *, dim_size: int):
        super().__init__(operands=[updates, indices], properties={"dim_size": i64_attr(dim_size)})

    def check_attributes(self) -> None:
        require_non_negative(self, dim_size=self.dim_size.value.data)

    def infer_result_types(self) -> Sequence[Attribute]:
        updates, indices = tensor_type(self.updates), self.index_type()
        require_rank(self, indices, 1, "indices")
        require_min_rank(self, updates, 1, "updates")
        rows, *rest = updates.get_shape()
        (count,) = indices.get_shape()
        require(
            dims_match(rows, count),
            self,
            lambda: f"updates {fmt_shape(updates.get_shape())} and indices {fmt_shape(indices.get_shape())} "
            "differ in their first dim",
        )
        return [tensor(updates.element_type, [self.dim_size.value.data, *rest])]


@irdl_op_definition
class DynamicUpdateSliceOp(RlxOperation):
    """`operand` with the block at `start_indices` replaced by `update` (StableHLO
    `dynamic_update_slice`, `jax.lax.dynamic_update_slice`).

    `update` has `operand`'s rank and element type, and no dim larger than `operand`'s;
    `start_indices` are one rank-0 integer tensor per dim (any integer dtypes). Each start
    is clamped into `[0, operand.shape[d] - update.shape[d]]` before use, as StableHLO
    specifies, so the update always fits: an out-of-range position moves the block, it is
    never an error. The result has `operand`'s type. A decode step writes one position of a
    static KV cache with it (`cache [B, H, S, D]`, `new [B, H, 1, D]`, starts `0, 0, pos, 0`).
    """

    name = "mir.dynamic_update_slice"
    operand = operand_def(TensorType)
    update = operand_def(TensorType)
    start_indices = var_operand_def(TensorType)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT, OperandRoles.of(start_indices=Role.INDEX))
    assembly_format = "$operand `,` $update `at` ` ` `[` $start_indices `]` " + FUNCTIONAL

    def __init__(self, operand: SSAValue, update: SSAValue, *start_indices: SSAValue):
        super().__init__(operands=[operand, update, list(start_indices)])

    def infer_result_types(self) -> Sequence[Attribute]:
        operand, update = tensor_type(self.operand), tensor_type(self.update)
        shape, part = operand.get_shape(), update.get_shape()
        require_same_element_type(self, operand, {"update": update})
        require_rank(self, update, len(shape), "update")
        require(
            len(self.start_indices) == len(shape),
            self,
            lambda: f"takes one start index per dim of the operand ({len(shape)}), got {len(self.start_indices)}",
        )
        for i, start in enumerate(self.start_indices):
            t = tensor_type(start)
            require(
                t.get_num_dims() == 0 and dtypes.dtype_of(t.element_type).kind in ("int", "uint"),
                self,
                lambda: f"start index {i} must be a rank-0 integer tensor, got {t}",
            )
        for d, (size, length) in enumerate(zip(shape, part)):
            require(
                DYNAMIC in (size, length) or length <= size,
                self,
                lambda: f"update {fmt_shape(part)} does not fit in operand {fmt_shape(shape)} (dim {d})",
            )
        return [operand]


OPS = [GatherOp, ScatterAddOp, DynamicUpdateSliceOp]
ATTRIBUTES: list[type] = []
