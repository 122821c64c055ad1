"""Building blocks the batching rules share.

Every batched value has its batch axis in front. The helpers here are the few
ways a rule meets an op: re-emit it with new operands and shifted axis
attributes (`rebuild`, `shift_axis`), line a batched operand up with broadcast
partners (`pad_rank`), give an unbatched operand the batch axis where the op
needs every operand batched (`materialize`), merge the batch axis into the op's
own leading batch dim and split it again (`fold`, `unfold`), or map the op over
the batch with a `mir.scan` (`sequential`, for ops whose per-example operands
cannot share one call: a loop in the IR, registered by name per op, never a
silent fallback).
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, TensorType, i64
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue

from rlx_xdsl.autodiff.emit import splat
from rlx_xdsl.batching.registry import BatchArgs, Results, Unsupported, batched
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, is_static, shape_of
from rlx_xdsl.transforms.statistics import Statistic

MAPPED_OVER_BATCH = Statistic("num-mapped-over-batch", "Number of ops mapped over the batch by a mir.scan")


def example_rank(value: SSAValue | Attribute) -> int:
    return len(shape_of(value.type if isinstance(value, SSAValue) else value))


def batched_type(t: Attribute, size: int) -> TensorType:
    """`t` with a leading batch axis of `size`."""
    tt = tensor_type(t)
    return TensorType(tt.element_type, [size, *tt.get_shape()])


def _reshape_spec(shape: Sequence[int]) -> list[int]:
    """`shape` as a reshape target: one `?` dim becomes -1; more cannot be expressed."""
    if sum(d == DYNAMIC for d in shape) > 1:
        raise Unsupported(f"a reshape to a shape with several dynamic dims ({list(shape)})")
    return [-1 if d == DYNAMIC else d for d in shape]


def reshape(e: Emitter, value: SSAValue, shape: Sequence[int]) -> SSAValue:
    if list(shape_of(value.type)) == list(shape):
        return value
    return e.mir.reshape(value, new_shape=_reshape_spec(shape))


# Re-emitting an op ------------------------------------------------------------------


def as_property(value: object) -> Attribute:
    """A Python int or int list as the i64 attribute MIR's properties use."""
    if isinstance(value, Attribute):
        return value
    if isinstance(value, int):
        return IntegerAttr(value, i64)
    return DenseArrayBase.from_list(i64, list(value))  # type: ignore[arg-type]


def rebuild(e: Emitter, op: Operation, operands: Sequence[SSAValue], **properties: object) -> Operation:
    """`op` again (same class, properties, attributes and regions) on `operands`, with
    `properties` replaced, its result types inferred; inserted and returned."""
    props = dict(op.properties)
    props.update({name: as_property(v) for name, v in properties.items()})
    new = type(op).create(
        operands=list(operands),
        result_types=[r.type for r in op.results],
        properties=props,
        attributes=dict(op.attributes),
        regions=[r.clone() for r in op.regions],
    )
    new.refresh_result_types()  # type: ignore[attr-defined]
    e.insert(new)
    return new


def rebuilt(e: Emitter, op: Operation, operands: Sequence[SSAValue], **properties: object) -> Results:
    """`rebuild`, with every result batched."""
    return batched(*rebuild(e, op, operands, **properties).results)


def shift_axis(axis: int) -> int:
    """A per-example axis in the batched value: non-negative axes move by one, negative
    ones (counted from the end) stay."""
    return axis + 1 if axis >= 0 else axis


def int_prop(op: Operation, name: str) -> int:
    attr = op.properties[name]
    assert isinstance(attr, IntegerAttr)
    return attr.value.data


def ints_prop(op: Operation, name: str) -> list[int]:
    attr = op.properties[name]
    assert isinstance(attr, DenseArrayBase)
    return list(attr.get_values())  # type: ignore[arg-type]


# Lining operands up -----------------------------------------------------------------


def pad_rank(e: Emitter, value: SSAValue, rank: int) -> SSAValue:
    """A batched `[N, *s]` as `[N, 1, ..., 1, *s]` of per-example rank `rank`, so that
    NumPy broadcasting aligns `s` with the other operands' trailing dims."""
    n, *shape = shape_of(value.type)
    if len(shape) >= rank:
        return value
    return reshape(e, value, [n, *([1] * (rank - len(shape))), *shape])


def broadcast_operands(op: Operation, args: BatchArgs, e: Emitter) -> list[SSAValue]:
    """The operands of a broadcasting op: batched ones padded to the highest per-example
    rank, unbatched ones as they are (broadcasting gives them the batch axis)."""
    rank = max(example_rank(v) for v in op.operands)
    return [pad_rank(e, v, rank) if b else v for v, b in zip(args.values, args.batched, strict=True)]


def materialize(e: Emitter, value: SSAValue, size: int) -> SSAValue:
    """An unbatched value broadcast to `[N, *shape]` (for ops that need every operand batched)."""
    return e.mir.expand(value, target_shape=[size, *([-1] * example_rank(value))])


def all_batched(e: Emitter, args: BatchArgs) -> list[SSAValue]:
    return [v if b else materialize(e, v, args.size) for v, b in zip(args.values, args.batched, strict=True)]


# The batch folded into the op's own batch dim ---------------------------------------


def fold(e: Emitter, value: SSAValue) -> SSAValue:
    """`[N, B, *rest]` as `[N * B, *rest]`: the batch merged into the op's leading dim."""
    if example_rank(value) < 2:
        raise Unsupported(f"folding the batch into a leading dim needs one, got {value.type}")
    n, b, *rest = shape_of(value.type)
    merged = n * b if b != DYNAMIC else DYNAMIC
    if merged == DYNAMIC and not is_static(rest):
        raise Unsupported("folding the batch into a dynamic leading dim needs the other dims static")
    return reshape(e, value, [merged, *rest])


def unfold(e: Emitter, value: SSAValue, size: int) -> SSAValue:
    """`[N * B, *rest]` back to `[N, B, *rest]`."""
    nb, *rest = shape_of(value.type)
    inner = nb // size if nb != DYNAMIC else DYNAMIC
    if inner == DYNAMIC and not is_static(rest):
        raise Unsupported("unfolding a dynamic leading dim needs the other dims static")
    return reshape(e, value, [size, inner, *rest])


def folded(e: Emitter, op: Operation, args: BatchArgs, fold_operands: Sequence[int], **properties: object) -> Results:
    """`op` with the batch merged into the leading dim of the operands `fold_operands`
    (materialised first when unbatched) and split out of every result again. The other
    operands must be unbatched (weights, shared tables)."""
    operands = list(args.values)
    for i, (v, b) in enumerate(zip(args.values, args.batched, strict=True)):
        if i in fold_operands:
            operands[i] = fold(e, v if b else materialize(e, v, args.size))
        elif b:
            return sequential(e, op, args)
    new = rebuild(e, op, operands, **properties)
    return batched(*(unfold(e, r, args.size) for r in new.results))


# Mapping the op over the batch ------------------------------------------------------


def sequential(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """`op` mapped over the batch by a `mir.scan` of N steps: the batched operands are
    its xs (step t sees example t), the unbatched ones its bcasts, each result a carry
    whose saved trajectory is the batched result. One op per example, in a loop: for
    ops whose examples cannot share one call (per-example weights, a per-example
    predicate), as JAX's sequential batching of primitives without a batched form."""
    from rlx_xdsl.dialects.mir.regions import YieldOp
    from rlx_xdsl.dialects.mir.structured import ScanOp

    results = [tensor_type(r.type) for r in op.results]
    if all(is_static(t.get_shape()) for t in results):
        init = [splat(e, 0, t.element_type, t.get_shape()) for t in results]
    else:  # `?` dims: the carries start as example 0's results, which have the right shapes
        first = [e.mir.gather(v, e.mir.constant(0, "i64"), axis=0) if b else v
                 for v, b in zip(args.values, args.batched, strict=True)]  # fmt: skip
        probe = op.clone()
        probe.operands = first
        init = list(e.insert(probe).results)
    shared = [i for i, b in enumerate(args.batched) if not b]
    mapped = [i for i, b in enumerate(args.batched) if b]
    block = Block(arg_types=[*results, *(op.operands[i].type for i in shared), *(op.operands[i].type for i in mapped)])
    inside = [SSAValue.get(v) for v in op.operands]
    for k, i in enumerate([*shared, *mapped]):
        inside[i] = block.args[len(results) + k]
    body_op = op.clone()
    body_op.operands = inside
    block.add_op(body_op)
    block.add_op(YieldOp(*body_op.results))
    scan = ScanOp(
        init,
        Region(block),
        length=args.size,
        bcasts=[args.values[i] for i in shared],
        xs=[args.values[i] for i in mapped],
        save_trajectory=True,
    )
    e.insert(scan)
    MAPPED_OVER_BATCH.add()
    return batched(*scan.results)


def leading(e: Emitter, op: Operation, args: BatchArgs, together: Sequence[int], **properties: object) -> Results:
    """`op` on the batched values themselves, with `properties` replaced (axes shifted):
    for ops that accept any number of leading dims. The operands `together` get the batch
    axis (materialised when unbatched); any other operand must be unbatched (a weight, a
    table): when it is not, the op is mapped over the batch (`sequential`)."""
    if any(b for i, b in enumerate(args.batched) if i not in together):
        return sequential(e, op, args)
    rank = max(example_rank(op.operands[i]) for i in together)
    operands = [
        pad_rank(e, v if b else materialize(e, v, args.size), rank) if i in together else v
        for i, (v, b) in enumerate(zip(args.values, args.batched, strict=True))
    ]
    return rebuilt(e, op, operands, **properties)


def folding(*fold_operands: int):
    """The rule of an op with a fixed-rank layout whose leading dim is its own batch
    (NCHW images, `[B, H, S, D]` heads, rows of logits): the batch folds into it."""

    def rule(e: Emitter, op: Operation, args: BatchArgs) -> Results:
        return folded(e, op, args, fold_operands)

    rule.__doc__ = f"Folds the batch into the leading dim of operands {list(fold_operands)}."
    return rule


def broadcasting(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """The rule of ops whose operands broadcast NumPy-style (elementwise ops, matmul's batch
    dims): batched operands padded to the highest rank, unbatched ones left alone."""
    return rebuilt(e, op, broadcast_operands(op, args, e))


def map_over_batch(e: Emitter, op: Operation, args: BatchArgs) -> Results:
    """The rule of ops with no batched form: a `mir.scan` over the examples (`sequential`)."""
    return sequential(e, op, args)


def leading_rule(*together: int, axis: str | None = None):
    """The rule of an op taking any leading dims: operands `together` get the batch axis,
    the others are shared (batched ones map the op over the batch); the int property
    `axis`, when named and set, shifts past the batch axis."""

    def rule(e: Emitter, op: Operation, args: BatchArgs) -> Results:
        properties = {}
        if axis is not None and op.properties.get(axis) is not None:
            properties[axis] = shift_axis(int_prop(op, axis))
        return leading(e, op, args, together, **properties)

    rule.__doc__ = f"The batch is one more leading dim of operands {list(together)}; the others are shared."
    return rule
