"""Building tensor computations from upstream ops: sizes, `tensor.empty`, `linalg.generic`, reshapes.

A size is a `Dim`: a Python int when it is static, an `index` SSA value when it
is only known at run time (read with `tensor.dim` from an operand). Rules
compute result sizes from operand sizes and `Tensors` turns them into
`tensor.empty` operands and result types, so dynamic dims need no special
cases in the rules.

Loops of a `linalg.generic` are numbered; an operand's indexing map says which
loop indexes each of its dims (`loops(n, [0, None, 2])`: dim 1 is broadcast,
always index 0).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, tensor
from xdsl.dialects.builtin import (
    AffineMapAttr,
    ArrayAttr,
    DenseArrayBase,
    IndexType,
    IntegerAttr,
    TensorType,
    i64,
)
from xdsl.dialects.linalg.attrs import IteratorType, IteratorTypeAttr
from xdsl.dialects.linalg.ops import CopyOp, FillOp, GenericOp, YieldOp
from xdsl.dialects.utils import split_dynamic_index_list
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.ir.affine import AffineExpr, AffineMap

from rlx_xdsl import dtypes
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, storage_type
from rlx_xdsl.dtypes import DType
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC

Dim = int | SSAValue
"""A size: static (int) or an `index` value."""

Body = Callable[..., SSAValue | Sequence[SSAValue]]
"""`body(scalars, *element_args) -> yielded value(s)` of a `linalg.generic`."""

PARALLEL = "parallel"
REDUCTION = "reduction"
ITERATORS = {PARALLEL: IteratorType.PARALLEL, REDUCTION: IteratorType.REDUCTION}


def loops(n_loops: int, dims: Sequence[int | None]) -> AffineMap:
    """The indexing map reading dim `k` of an operand at loop `dims[k]` (None: index 0)."""
    exprs = [AffineExpr.constant(0) if d is None else AffineExpr.dimension(d) for d in dims]
    return AffineMap(n_loops, 0, tuple(exprs))


def identity(n_loops: int) -> AffineMap:
    return AffineMap.identity(n_loops)


def broadcast_map(shape: Sequence[int], out_shape: Sequence[int]) -> AffineMap:
    """The map reading an operand of `shape` broadcast (NumPy rules) to `out_shape`.

    Dims align at the end; a static 1 facing a larger or unknown dim is broadcast.
    A `?` is taken to equal the result dim (no run-time broadcasting of `?` dims).
    """
    lead = len(out_shape) - len(shape)
    dims = [None if d == 1 and out_shape[lead + k] != 1 else lead + k for k, d in enumerate(shape)]
    return loops(len(out_shape), dims)


def element_type(value: SSAValue) -> Attribute:
    """The element type of a tensor value as lowered IR holds it (unsigned types are signless)."""
    t = value.type.element_type
    return storage_type(dtypes.dtype_of(t)) if dtypes.is_supported(t) else t


def static_shape(dims: Sequence[Dim]) -> list[int]:
    return [d if isinstance(d, int) else DYNAMIC for d in dims]


class Tensors:
    """Emits tensor-level upstream ops (and index arithmetic) at one insertion point."""

    def __init__(self, emitter: Emitter):
        self.e = emitter
        self.s = Scalars(emitter)
        """Scalars at the insertion point (index arithmetic, fill values)."""

    def emit(self, op) -> SSAValue:
        self.e.insert(op)
        return op.results[0]

    # Sizes --------------------------------------------------------------------------

    def dims(self, value: SSAValue) -> list[Dim]:
        """The sizes of a tensor value: static ints, `tensor.dim` for `?` dims."""
        t = value.type
        assert isinstance(t, TensorType)
        return [d if d != DYNAMIC else self.dim(value, i) for i, d in enumerate(t.get_shape())]

    def sized_like(self, dims: Sequence[Dim], op) -> list[Dim]:
        """`dims` with the entries `op`'s `like_dims` names (`mir.iota`, `mir.expand`,
        `mir.reshape`, `mir.narrow`) read from its `like` (`tensor.dim` where `?`)."""
        if op.like is None:
            return list(dims)
        return [self.dim(op.like, k) if k >= 0 else d for d, k in zip(dims, op.like_dims.get_values(), strict=True)]

    def dim(self, value: SSAValue, axis: int) -> Dim:
        d = value.type.get_shape()[axis]
        if d != DYNAMIC:
            return d
        return self.emit(tensor.DimOp(value, self.s.index_constant(axis)))

    def broadcast_dims(self, values: Sequence[SSAValue]) -> list[Dim]:
        """The sizes `values` broadcast to (NumPy rules)."""
        return self.broadcast_dim_lists(*(self.dims(v) for v in values))

    @staticmethod
    def broadcast_dim_lists(*dim_lists: Sequence[Dim]) -> list[Dim]:
        """Sizes broadcast NumPy-style: a static size > 1 wins, else a `?` size, else 1.

        A `?` is taken to be the result size (it is not broadcast at run time).
        """
        rank = max((len(d) for d in dim_lists), default=0)
        out: list[Dim] = []
        for axis in range(rank):
            aligned = [d[axis - rank + len(d)] for d in dim_lists if axis - rank + len(d) >= 0]
            static = [d for d in aligned if isinstance(d, int) and d != 1]
            dynamic = [d for d in aligned if not isinstance(d, int)]
            out.append(static[0] if static else dynamic[0] if dynamic else 1)
        return out

    def index_value(self, d: Dim) -> SSAValue:
        return self.s.index_constant(d) if isinstance(d, int) else d

    def product(self, dims: Sequence[Dim]) -> Dim:
        """The product of sizes, folded while static."""
        static = math.prod(d for d in dims if isinstance(d, int))
        result: Dim = static
        for d in dims:
            if not isinstance(d, int):
                result = d if result == 1 else self.emit(arith.MuliOp(self.index_value(result), d))
        return result

    def quotient(self, a: Dim, b: Dim) -> Dim:
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        return self.emit(arith.DivUIOp(self.index_value(a), self.index_value(b)))

    def tensor_type(self, dims: Sequence[Dim], dt: DType) -> TensorType:
        return TensorType(storage_type(dt), static_shape(dims))

    # Creating tensors ---------------------------------------------------------------

    def empty(self, dims: Sequence[Dim], dt: DType) -> SSAValue:
        dynamic = [d for d in dims if not isinstance(d, int)]
        return self.emit(tensor.EmptyOp(dynamic, self.tensor_type(dims, dt)))

    def full(self, dims: Sequence[Dim], dt: DType, value: float | int | bool) -> SSAValue:
        """A tensor of `dims` holding `value` everywhere (`linalg.fill`; a generic writing
        the scalar for complex, which xDSL's `linalg.fill` does not take)."""
        init = self.empty(dims, dt)
        if dt.kind == "complex":
            rank = len(dims)
            body = lambda s, _: s.constant(value, dt)
            return self.generic([], [(init, identity(rank))], [PARALLEL] * rank, body)[0]
        return self.emit(FillOp([self.s.constant(value, dt)], [init], [init.type]))

    # linalg.generic -----------------------------------------------------------------

    def generic(
        self,
        inputs: Sequence[tuple[SSAValue, AffineMap]],
        outputs: Sequence[tuple[SSAValue, AffineMap]],
        iterators: Sequence[str],
        body: Body,
    ) -> list[SSAValue]:
        """A `linalg.generic` over `len(iterators)` loops; `body` gets the element of
        each input, then the current value of each output, and returns the new ones."""
        values = [v for v, _ in (*inputs, *outputs)]
        block = Block(arg_types=[element_type(v) for v in values])
        produced = body(Scalars(Emitter.at_end(block, self.e.location)), *block.args)
        yielded = [produced] if isinstance(produced, SSAValue) else list(produced)
        block.add_op(YieldOp(*yielded))
        op = GenericOp(
            [v for v, _ in inputs],
            [v for v, _ in outputs],
            Region(block),
            [AffineMapAttr(m) for _, m in (*inputs, *outputs)],
            ArrayAttr([IteratorTypeAttr(ITERATORS[kind]) for kind in iterators]),
            [v.type for v, _ in outputs],
        )
        self.e.insert(op)
        return list(op.results)

    def map_elements(
        self,
        operands: Sequence[SSAValue],
        out_dims: Sequence[Dim],
        out_dt: DType,
        body: Body,
        into: SSAValue | None = None,
    ) -> SSAValue:
        """An elementwise `linalg.generic`: operands broadcast (NumPy rules) to `out_dims`,
        written into a new tensor or over `into` (a loop's carried tensor)."""
        out_shape = static_shape(out_dims)
        rank = len(out_dims)
        inputs = [(v, broadcast_map(v.type.get_shape(), out_shape)) for v in operands]
        init = into if into is not None else self.empty(out_dims, out_dt)
        return self.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)[0]

    def reduce(
        self,
        inputs: Sequence[tuple[SSAValue, AffineMap]],
        loop_dims: Sequence[Dim],
        reduced: Sequence[int],
        acc_dt: DType,
        identity_value: float | int | bool,
        body: Body,
    ) -> SSAValue:
        """A reduction over loops `reduced` of a `len(loop_dims)`-loop nest; the result has
        the other loops' sizes, starts at `identity_value` and `body(s, *elements, acc)`
        returns the new accumulator."""
        kept = [i for i in range(len(loop_dims)) if i not in reduced]
        init = self.full([loop_dims[i] for i in kept], acc_dt, identity_value)
        iterators = [REDUCTION if i in reduced else PARALLEL for i in range(len(loop_dims))]
        out_map = loops(len(loop_dims), kept)
        return self.generic(inputs, [(init, out_map)], iterators, body)[0]

    def copy_into(self, value: SSAValue, into: SSAValue) -> SSAValue:
        """`value` written over `into` (`linalg.copy`, the same type)."""
        return self.emit(CopyOp([value], [into]))

    def carried_in_place(self, values: Sequence[SSAValue], carried: Sequence[SSAValue]) -> list[SSAValue]:
        """The next values of a loop's carried tensors (its iter_args `carried`), written
        into them: upstream's one-shot bufferization requires each yielded buffer to be
        its iter_arg's, which a value built in a fresh `tensor.empty` is not.

        A carry that takes another carry's value copies it out first, before that one
        is overwritten; one that keeps its value, or was already updated in place (a
        row inserted into it), is yielded as it is.
        """
        sources = [
            self.copy_into(v, self.empty(self.dims(v), dtypes.dtype_of(element_type(v))))
            if v in carried and v is not c
            else v
            for v, c in zip(values, carried, strict=True)
        ]
        return [v if _written_into(v, c) else self.copy_into(v, c) for v, c in zip(sources, carried)]

    def convert(self, value: SSAValue, src: DType, dst: DType) -> SSAValue:
        """`value` with its elements converted from `src` to `dst` (numpy's `astype`)."""
        if src == dst:
            return value
        return self.map_elements([value], self.dims(value), dst, lambda s, x, _: s.cast(x, src, dst))

    # Reshapes -----------------------------------------------------------------------

    def collapse(self, value: SSAValue, groups: Sequence[Sequence[int]]) -> SSAValue:
        """`tensor.collapse_shape`: each group of adjacent dims becomes one dim."""
        shape = value.type.get_shape()
        if not groups:
            return self._single_element(value, [])
        out = [
            DYNAMIC if any(shape[i] == DYNAMIC for i in g) else math.prod(shape[i] for i in g) for g in groups
        ]
        result_type = TensorType(element_type(value), out)
        op = tensor.CollapseShapeOp(
            operands=[value], result_types=[result_type], properties={"reassociation": _reassociation(groups)}
        )
        return self.emit(op)

    def expand(self, value: SSAValue, groups: Sequence[Sequence[int]], out_dims: Sequence[Dim]) -> SSAValue:
        """`tensor.expand_shape`: dim `k` of `value` splits into the dims of `groups[k]`."""
        if value.type.get_num_dims() == 0:
            return self._single_element(value, out_dims)
        result_type = TensorType(element_type(value), static_shape(out_dims))
        dynamic = [d for d in out_dims if not isinstance(d, int)]
        op = tensor.ExpandShapeOp(value, dynamic, _reassociation(groups), static_shape(out_dims), result_type)
        return self.emit(op)

    def _single_element(self, value: SSAValue, out_dims: Sequence[Dim]) -> SSAValue:
        """A one-element tensor in another all-ones shape (to or from rank 0), copied by a
        `linalg.generic`: xDSL rejects the empty reassociations MLIR uses for these."""
        rank = len(out_dims)
        source = AffineMap(rank, 0, tuple(AffineExpr.constant(0) for _ in value.type.get_shape()))
        init = self.empty([1] * rank, dtypes.dtype_of(element_type(value)))
        return self.generic(
            [(value, source)], [(init, identity(rank))], [PARALLEL] * rank, lambda s, x, _: x
        )[0]

    def extract_scalar(self, value: SSAValue) -> SSAValue:
        """The element of a one-element tensor (`tensor.extract`; rank 0 goes through
        rank 1, since xDSL cannot parse back an extract with no indices)."""
        if value.type.get_num_dims() == 0:
            value = self._single_element(value, [1])
        zeros = [self.s.index_constant(0)] * value.type.get_num_dims()
        return self.emit(tensor.ExtractOp(value, zeros, element_type(value)))

    def reshape(self, value: SSAValue, out_dims: Sequence[Dim]) -> SSAValue:
        """Row-major reshape: one collapse or expand when the dims regroup, else collapse to
        one dim and expand to `out_dims`."""
        rank = value.type.get_num_dims()
        in_shape = list(value.type.get_shape())
        if all(isinstance(d, int) for d in out_dims) and list(out_dims) == in_shape:
            return value
        if rank == 0 or not out_dims:
            return self._single_element(value, out_dims)
        out_shape = static_shape(out_dims)
        if len(out_shape) < rank and (groups := regrouping(out_shape, in_shape)) is not None:
            return self.collapse(value, groups)
        if len(out_shape) > rank and (groups := regrouping(in_shape, out_shape)) is not None:
            return self.expand(value, groups, out_dims)
        flat = value if rank == 1 else self.collapse(value, [list(range(rank))])
        if len(out_dims) == 1:
            return self.cast_to(flat, TensorType(element_type(value), static_shape(out_dims)))
        return self.expand(flat, [list(range(len(out_dims)))], out_dims)

    def cast_to(self, value: SSAValue, target: Attribute) -> SSAValue:
        """`value` as type `target`, through `tensor.cast` when only static-ness differs."""
        if value.type == target:
            return value
        return self.emit(tensor.CastOp(value, target))

    def extract_slice(
        self,
        value: SSAValue,
        offsets: Sequence[Dim],
        sizes: Sequence[Dim],
        strides: Sequence[int] | None = None,
    ) -> SSAValue:
        strides = strides if strides is not None else [1] * len(sizes)
        result_type = TensorType(element_type(value), static_shape(sizes))
        return self.emit(tensor.ExtractSliceOp(value, list(offsets), list(sizes), list(strides), result_type))

    def pad(
        self, value: SSAValue, low: Sequence[int], high: Sequence[int], fill: float | int, dt: DType
    ) -> SSAValue:
        """`value` padded with `low`/`high` cells of `fill` on each dim (`tensor.pad`)."""
        if not any(low) and not any(high):
            return value
        shape = value.type.get_shape()
        out = [d if d == DYNAMIC else d + lo + hi for d, lo, hi in zip(shape, low, high)]
        block = Block(arg_types=[IndexType()] * len(shape))
        block.add_op(constant := arith.ConstantOp(Scalars.constant_attr(fill, dt)))
        block.add_op(tensor.YieldOp(constant.result))
        result_type = TensorType(element_type(value), out)
        return self.emit(tensor.PadOp(value, [], [], Region(block), low, high, result_type))

    def insert_slice(
        self, value: SSAValue, into: SSAValue, offsets: Sequence[Dim], sizes: Sequence[Dim]
    ) -> SSAValue:
        """`into` with the block at `offsets` replaced by `value` (unit strides)."""
        static_offsets, dynamic_offsets = split_dynamic_index_list(list(offsets), DYNAMIC)
        static_sizes, dynamic_sizes = split_dynamic_index_list(list(sizes), DYNAMIC)
        op = tensor.InsertSliceOp.build(
            operands=[value, into, dynamic_offsets, dynamic_sizes, []],
            properties={
                "static_offsets": DenseArrayBase.from_list(i64, static_offsets),
                "static_sizes": DenseArrayBase.from_list(i64, static_sizes),
                "static_strides": DenseArrayBase.from_list(i64, [1] * len(static_sizes)),
            },
            result_types=[into.type],
        )
        return self.emit(op)

    def row(self, stacked: SSAValue, t: Dim) -> SSAValue:
        """`stacked[t]`: row `t` of a `[rows, ...]` tensor, without the leading dim."""
        dims = self.dims(stacked)
        block = self.extract_slice(stacked, [t] + [0] * (len(dims) - 1), [1, *dims[1:]])
        if len(dims) == 1:
            return self._single_element(block, [])
        return self.collapse(block, [[0, 1], *([i] for i in range(2, len(dims)))])

    def insert_row(self, value: SSAValue, stacked: SSAValue, t: Dim) -> SSAValue:
        """`stacked` with row `t` replaced by `value` (shaped like one row)."""
        dims = self.dims(stacked)
        if value.type.get_num_dims() == 0:
            block = self._single_element(value, [1])
        else:
            groups = [[0, 1], *([i] for i in range(2, len(dims)))]
            block = self.expand(value, groups, [1, *dims[1:]])
        return self.insert_slice(block, stacked, [t] + [0] * (len(dims) - 1), [1, *dims[1:]])

    def concat(self, values: Sequence[SSAValue], axis: int) -> SSAValue:
        if len(values) == 1:
            return values[0]
        shapes = [v.type.get_shape() for v in values]
        along = [s[axis] for s in shapes]
        out = [
            (DYNAMIC if DYNAMIC in along else sum(along))
            if i == axis
            else next((s[i] for s in shapes if s[i] != DYNAMIC), DYNAMIC)
            for i in range(len(shapes[0]))
        ]
        result_type = TensorType(element_type(values[0]), out)
        return self.emit(tensor.ConcatOp(list(values), axis, result_type))


def _written_into(value: SSAValue, carried: SSAValue) -> bool:
    """`value` is `carried`, or `carried` with a slice inserted in place."""
    owner = value.owner
    return value is carried or (isinstance(owner, tensor.InsertSliceOp) and owner.dest is carried)


def regrouping(coarse: Sequence[int], fine: Sequence[int]) -> list[list[int]] | None:
    """Groups of consecutive `fine` dims whose products are the `coarse` dims (unit dims join
    a neighbouring group), or None when the shapes do not regroup that way. Static only."""
    if DYNAMIC in coarse or DYNAMIC in fine:
        return None
    groups: list[list[int]] = []
    k = 0
    for size in coarse:
        group, product = [], 1
        while k < len(fine) and (product < size or (not group and fine[k] == 1 and size == 1)):
            group.append(k)
            product *= fine[k]
            k += 1
            if product == size and size != 1:
                break
        if product != size or not group:
            return None
        groups.append(group)
    if not groups:
        return None
    while k < len(fine):  # trailing unit dims join the last group
        if fine[k] != 1:
            return None
        groups[-1].append(k)
        k += 1
    return groups


def _reassociation(groups: Sequence[Sequence[int]]) -> ArrayAttr:
    return ArrayAttr([ArrayAttr([IntegerAttr(i, i64) for i in g]) for g in groups])
