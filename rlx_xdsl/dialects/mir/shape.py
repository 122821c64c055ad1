"""MIR shape and data-movement ops: reshape, transpose, narrow, concat, expand.

None of these ops change values or dtypes; their verifiers only check that the
requested layout change is possible and infer the result shape, keeping `?`
dims wherever the input does not determine them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IntegerAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import (
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.traits import Pure

from rlx_xdsl.dialects.base import (
    FUNCTIONAL,
    I64_ARRAY,
    RlxOperation,
    fmt_list,
    i64_array,
    i64_attr,
    refine_dim,
    require,
    require_non_negative,
    require_same_element_type,
    sizes_from_like,
    tensor_type,
)
from rlx_xdsl.dialects.traits import DATA_MOVEMENT, OperandRoles, Role, ViewOf
from rlx_xdsl.shapes import (
    DYNAMIC,
    ShapeError,
    dims_match,
    fmt_shape,
    is_static,
    normalize_axis,
    num_elements,
    tensor,
)


def reshaped(in_shape: Sequence[int], new_shape: Sequence[int]) -> list[int]:
    """`new_shape` with its -1 resolved; `?` when the input's element count is unknown."""
    total = num_elements(in_shape)
    known = math.prod(d for d in new_shape if d != -1)
    if -1 in new_shape:
        fits = total is None or (known != 0 and total % known == 0)
    else:
        fits = total is None or total == known
    if not fits:
        raise ShapeError(
            f"cannot reshape {fmt_shape(in_shape)} ({total} elements) to new_shape {fmt_list(new_shape)}"
        )
    missing = DYNAMIC if total is None else total // max(known, 1)
    return [missing if d == -1 else d for d in new_shape]


@irdl_op_definition
class ReshapeOp(RlxOperation):
    """Reinterprets the elements in a new shape (`Reshape{new_shape}`); one -1 is inferred.

    With `like %t like_dims = [...]`, result dim `i` with `like_dims[i] = k >= 0` has the
    size of `%t`'s dim `k` at run time (its `new_shape` entry must be -1); one other -1
    is still inferred from the element count. This is how a view with several run-time
    sizes (an imported model's `[B*S, 32] -> [B, S, 32]`) is one reshape. `like_dims` has
    one entry per result dim, -1 for the others.
    """

    name = "mir.reshape"
    input = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    new_shape = prop_def(I64_ARRAY)
    like_dims = opt_prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT, ViewOf(), OperandRoles.of(like=Role.SHAPE))
    assembly_format = (
        "$input `new_shape` `=` $new_shape (`like` $like^ `like_dims` `=` $like_dims)? "
        + FUNCTIONAL
    )

    def __init__(
        self,
        input: SSAValue,
        *,
        new_shape: Sequence[int],
        like: SSAValue | None = None,
        like_dims: Sequence[int] | None = None,
    ):
        properties = {"new_shape": i64_array(new_shape)}
        if like_dims is not None:
            properties["like_dims"] = i64_array(like_dims)
        super().__init__(operands=[input, [like] if like is not None else []], properties=properties)

    def check_attributes(self) -> None:
        shape = self.new_shape.get_values()
        for d in shape:
            require(d >= -1, self, lambda: f"new_shape entries must be >= -1, got {d}")
        sized = self.sizes_from_like()
        for i in sized:
            require(shape[i] == -1, self, lambda: f"new_shape entry {i} must be -1: `like` gives its size")
        inferred = [i for i, d in enumerate(shape) if d == -1 and i not in sized]
        require(len(inferred) <= 1, self, lambda: f"new_shape {fmt_list(shape)} has more than one -1")

    def sizes_from_like(self) -> dict[int, int]:
        """Result dim -> its size in `like`'s type, for the dims `like` sizes."""
        return sizes_from_like(self, self.like, self.like_dims, len(self.new_shape.get_values()))

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        sized = self.sizes_from_like()
        if not sized:
            return [tensor(t.element_type, reshaped(t.get_shape(), self.new_shape.get_values()))]
        shape = [sized.get(i, d) for i, d in enumerate(self.new_shape.get_values())]
        if DYNAMIC in sized.values():  # the element count of the like-sized dims is not known here
            return [tensor(t.element_type, [DYNAMIC if d == -1 else d for d in shape])]
        return [tensor(t.element_type, reshaped(t.get_shape(), shape))]


@irdl_op_definition
class TransposeOp(RlxOperation):
    """Permutes the axes (`Transpose{perm}`): result dim i is input dim `perm[i]`."""

    name = "mir.transpose"
    input = operand_def(TensorType)
    perm = prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$input `perm` `=` $perm " + FUNCTIONAL

    def __init__(self, input: SSAValue, *, perm: Sequence[int]):
        super().__init__(operands=[input], properties={"perm": i64_array(perm)})

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        perm = self.perm.get_values()
        rank = t.get_num_dims()
        require(
            sorted(perm) == list(range(rank)),
            self,
            lambda: f"perm {fmt_list(perm)} is not a permutation of the {rank} axes",
        )
        shape = t.get_shape()
        return [tensor(t.element_type, [shape[p] for p in perm])]


def selects_contiguous_run(op: Operation) -> bool:
    """the dims before `axis` are all 1.

    Such a narrow reads one contiguous run of its input, which LIR aliases.
    """
    shape = tensor_type(op.operands[0]).get_shape()
    axis = normalize_axis(op.axis.value.data, len(shape))
    return all(d == 1 for d in shape[:axis]) and is_static(shape[axis + 1 :])


def run_start(op: Operation) -> int:
    """The element offset of a contiguous narrow in its input: `start` rows of the trailing dims."""
    shape = tensor_type(op.operands[0]).get_shape()
    axis = normalize_axis(op.axis.value.data, len(shape))
    return op.start.value.data * math.prod(shape[axis + 1 :])


@irdl_op_definition
class NarrowOp(RlxOperation):
    """The slice `[start, start + len)` along `axis` (`Narrow{axis, start, len}`).

    With `like %t like_dims = [...]`, the length is read at run time: `like_dims` has
    one entry per result dim, `k >= 0` at `axis` only (the slice is as long as `%t`'s
    dim `k`; `len` must then be -1) and -1 elsewhere. This is an imported model's
    `x[:, :seq]` (a position buffer cut to the input's length). A slice past the end
    of the input is a run-time error.
    """

    name = "mir.narrow"
    input = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    start = prop_def(IntegerAttr[I64])
    len = prop_def(IntegerAttr[I64])
    like_dims = opt_prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(
        Pure(), DATA_MOVEMENT, ViewOf(when=selects_contiguous_run, offset=run_start), OperandRoles.of(like=Role.SHAPE)
    )
    assembly_format = (
        "$input `axis` `=` $axis `start` `=` $start `len` `=` $len "
        "(`like` $like^ `like_dims` `=` $like_dims)? " + FUNCTIONAL
    )

    def __init__(
        self,
        input: SSAValue,
        *,
        axis: int,
        start: int,
        len: int,
        like: SSAValue | None = None,
        like_dims: Sequence[int] | None = None,
    ):
        properties = {"axis": i64_attr(axis), "start": i64_attr(start), "len": i64_attr(len)}
        if like_dims is not None:
            properties["like_dims"] = i64_array(like_dims)
        super().__init__(operands=[input, [like] if like is not None else []], properties=properties)

    def check_attributes(self) -> None:
        if self.like is None:
            require_non_negative(self, start=self.start.value.data, len=self.len.value.data)
        else:
            require_non_negative(self, start=self.start.value.data)
            require(self.len.value.data == -1, self, "len must be -1: `like` gives the length")

    def sizes_from_like(self) -> dict[int, int]:
        """Result dim -> its size in `like`'s type, for the dim `like` sizes (the axis)."""
        return sizes_from_like(self, self.like, self.like_dims, tensor_type(self.input).get_num_dims())

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        shape = list(t.get_shape())
        axis = normalize_axis(self.axis.value.data, len(shape))
        start, length = self.start.value.data, self.len.value.data
        sized = self.sizes_from_like()
        if self.like is not None:
            require(list(sized) == [axis], self, lambda: f"like_dims must size axis {axis} and no other dim")
            length = sized[axis]
        require(
            DYNAMIC in (shape[axis], length) or start + length <= shape[axis],
            self,
            lambda: f"start {start} + len {length} exceeds dim {shape[axis]} of axis {axis}",
        )
        shape[axis] = length
        return [tensor(t.element_type, shape)]


@irdl_op_definition
class ConcatOp(RlxOperation):
    """Joins one or more tensors along `axis` (`Concat{axis}`); other dims must agree."""

    name = "mir.concat"
    inputs = var_operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT)
    assembly_format = "$inputs `axis` `=` $axis " + FUNCTIONAL

    def __init__(self, *inputs: SSAValue, axis: int):
        super().__init__(operands=[list(inputs)], properties={"axis": i64_attr(axis)})

    def infer_result_types(self) -> Sequence[Attribute]:
        require(len(self.inputs) >= 1, self, "needs at least one operand")
        types = [tensor_type(v) for v in self.inputs]
        first = types[0]
        shape = list(first.get_shape())
        axis = normalize_axis(self.axis.value.data, len(shape))
        for index, t in enumerate(types[1:], start=1):
            self._check_compatible(index, t, first, axis)
            other = t.get_shape()
            joined = DYNAMIC if DYNAMIC in (shape[axis], other[axis]) else shape[axis] + other[axis]
            shape = [refine_dim(a, b) for a, b in zip(shape, other)]
            shape[axis] = joined
        return [tensor(first.element_type, shape)]

    def _check_compatible(self, index: int, t: TensorType, first: TensorType, axis: int) -> None:
        """Operand `index` must match operand #0 in dtype, rank and every non-axis dim."""
        require_same_element_type(
            self, first, {f"operand #{index}": t}, "{what} has element type {actual}, expected {expected}"
        )
        require(
            t.get_num_dims() == first.get_num_dims(),
            self,
            lambda: f"operand #{index} has rank {t.get_num_dims()}, expected {first.get_num_dims()}",
        )
        pairs = enumerate(zip(t.get_shape(), first.get_shape()))
        require(
            all(dims_match(a, b) for i, (a, b) in pairs if i != axis),
            self,
            lambda: f"operand #{index} has shape {fmt_shape(t.get_shape())}, which differs from "
            f"{fmt_shape(first.get_shape())} outside axis {axis}",
        )


def expanded_shape(in_shape: Sequence[int], target: Sequence[int]) -> list[int]:
    """`in_shape` broadcast to `target` as `numpy.broadcast_to`; -1 keeps the input dim."""
    lead = len(target) - len(in_shape)

    def fail(reason: str) -> ShapeError:
        return ShapeError(f"cannot expand {fmt_shape(in_shape)} to target_shape {fmt_list(target)}: {reason}")

    if lead < 0:
        raise fail("it has fewer dims than the input")
    result = list(target[:lead])
    if -1 in result:
        raise fail(f"-1 at dim {result.index(-1)} has no input dim to keep")
    for d, t in zip(in_shape, target[lead:]):
        if t != -1 and d not in (1, t, DYNAMIC):
            raise fail(f"input dim {d} is neither 1 nor {t}")
        result.append(d if t == -1 else t)
    return result


@irdl_op_definition
class ExpandOp(RlxOperation):
    """Broadcasts to `target_shape` as `numpy.broadcast_to` (`Expand{target_shape}`).

    With `like %t like_dims = [...]`, result dim `i` with `like_dims[i] = k >= 0` has
    the size of `%t`'s dim `k` at run time; its `target_shape` entry must be -1 and the
    input's dim there 1 or absent. This is how a static dim (a batch-1 buffer) broadcasts
    to a dynamic size, such as an imported model's batch. `like_dims` has one entry per
    result dim, -1 for the others.
    """

    name = "mir.expand"
    input = operand_def(TensorType)
    like = opt_operand_def(TensorType)
    target_shape = prop_def(I64_ARRAY)
    like_dims = opt_prop_def(I64_ARRAY)
    result = result_def(TensorType)
    traits = traits_def(Pure(), DATA_MOVEMENT, OperandRoles.of(like=Role.SHAPE))
    assembly_format = (
        "$input `target_shape` `=` $target_shape (`like` $like^ `like_dims` `=` $like_dims)? " + FUNCTIONAL
    )

    def __init__(
        self,
        input: SSAValue,
        *,
        target_shape: Sequence[int],
        like: SSAValue | None = None,
        like_dims: Sequence[int] | None = None,
    ):
        properties = {"target_shape": i64_array(target_shape)}
        if like_dims is not None:
            properties["like_dims"] = i64_array(like_dims)
        super().__init__(operands=[input, [like] if like is not None else []], properties=properties)

    def check_attributes(self) -> None:
        for d in self.target_shape.get_values():
            require(d >= -1, self, lambda: f"target_shape entries must be >= -1, got {d}")

    def sizes_from_like(self) -> dict[int, int]:
        """Result dim -> its size in `like`'s type, for the dims `like` sizes."""
        return sizes_from_like(self, self.like, self.like_dims, len(self.target_shape.get_values()))

    def infer_result_types(self) -> Sequence[Attribute]:
        t = tensor_type(self.input)
        target = self.target_shape.get_values()
        from_like = self.sizes_from_like()
        for i in from_like:
            require(target[i] == -1, self, lambda: f"target_shape entry {i} must be -1: `like` gives its size")
        shape_in = t.get_shape()
        lead = len(target) - len(shape_in)
        for i in from_like:
            require(
                i < lead or shape_in[i - lead] == 1,
                self,
                lambda: f"input dim {i - lead} is {fmt_shape([shape_in[i - lead]])}, not 1: "
                "only a dim of 1 (or a new leading dim) broadcasts to `like`'s size",
            )
        shape = expanded_shape(shape_in, [1 if i in from_like else d for i, d in enumerate(target)])
        for i, size in from_like.items():
            shape[i] = size
        return [tensor(t.element_type, shape)]


OPS = [ReshapeOp, TransposeOp, NarrowOp, ConcatOp, ExpandOp]
ATTRIBUTES: list[type] = []
