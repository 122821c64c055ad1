"""Lowering of MIR normalisations: statistics as `linalg.generic` reductions over the
normalised dims (in f32 for f16/bf16, as the interpreter), then one elementwise
generic applying the statistics, gamma and beta. group_norm splits the channel
dim into (groups, channels per group) with `tensor.expand_shape` first."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.ir import SSAValue
from xdsl.ir.affine import AffineMap

from rlx_xdsl.conversions.mir_to_linalg.lowering import LOWERINGS, Lowering
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars, accumulator
from rlx_xdsl.conversions.mir_to_linalg.tensors import (
    PARALLEL,
    Dim,
    Tensors,
    broadcast_map,
    identity,
    loops,
)
from rlx_xdsl.dialects.mir import norm
from rlx_xdsl.dtypes import DType

Term = Callable[[Scalars, SSAValue, Sequence[SSAValue]], SSAValue]
"""What a statistic averages: `term(s, x_element, other_statistics) -> value`."""


def mean_over(
    lw: Tensors, x: SSAValue, dt: DType, axes: Sequence[int], term: Term, given: Sequence[SSAValue] = ()
) -> SSAValue:
    """The mean of `term(x, given)` over `axes` of `x` (in `dt`'s accumulator dtype).

    `given` are earlier statistics (shaped like the kept dims), e.g. the mean
    that the variance subtracts.
    """
    acc = accumulator(dt)
    dims = lw.dims(x)
    rank = len(dims)
    kept = loops(rank, [i for i in range(rank) if i not in axes])

    def body(s: Scalars, v: SSAValue, *rest: SSAValue) -> SSAValue:
        *stats, total = rest
        return s.add(total, term(s, s.cast(v, dt, acc), stats), acc)

    total = lw.reduce([(x, identity(rank)), *((g, kept) for g in given)], dims, axes, acc, 0, body)
    count = lw.product([dims[a] for a in axes])

    def divide(s: Scalars, t: SSAValue, _: SSAValue) -> SSAValue:
        return s.div(t, s.count(count, acc), acc)

    return lw.map_elements([total], lw.dims(total), acc, divide)


def square(s: Scalars, v: SSAValue, _: Sequence[SSAValue], acc: DType) -> SSAValue:
    return s.mul(v, v, acc)


def standardized(
    lw: Tensors,
    x: SSAValue,
    dt: DType,
    axes: Sequence[int],
    eps: float,
    centred: bool,
    affine: Sequence[tuple[SSAValue, DType, AffineMap]],
) -> SSAValue:
    """`(x - mean) / sqrt(var + eps) * gamma + beta` (without `- mean` for RMS), in `dt`.

    `affine` holds gamma and beta with their dtypes and indexing maps over x's dims.
    """
    acc = accumulator(dt)
    rank = x.type.get_num_dims()
    kept = loops(rank, [i for i in range(rank) if i not in axes])

    def centred_square(s: Scalars, v: SSAValue, mean: Sequence[SSAValue]) -> SSAValue:
        return square(s, s.sub(v, mean[0], acc), (), acc)

    if centred:
        mean = mean_over(lw, x, dt, axes, lambda s, v, _: v)
        stats = [mean, mean_over(lw, x, dt, axes, centred_square, [mean])]
    else:
        stats = [mean_over(lw, x, dt, axes, lambda s, v, _: square(s, v, (), acc))]

    def body(s: Scalars, v: SSAValue, *rest: SSAValue) -> SSAValue:
        *moments, gamma, beta, _ = rest
        v = s.cast(v, dt, acc)
        if centred:
            v = s.sub(v, moments[0], acc)
        scale = s.sqrt(s.add(moments[-1], s.constant(eps, acc), acc))
        g, b = (s.cast(p, p_dt, acc) for p, (_, p_dt, _) in zip((gamma, beta), affine))
        return s.cast(s.add(s.mul(s.div(v, scale, acc), g, acc), b, acc), acc, dt)

    inputs = [(x, identity(rank)), *((st, kept) for st in stats), *((p, m) for p, _, m in affine)]
    init = lw.empty(lw.dims(x), dt)
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)[0]


def _axis_norm(lw: Lowering, op: norm.AxisNormOperation, centred: bool) -> Sequence[SSAValue]:
    rank = op.x.type.get_num_dims()
    axes = list(range(op.normalized_axis(), rank))
    x_shape = op.x.type.get_shape()
    affine = [
        (v, lw.operand_dtype(i), broadcast_map(v.type.get_shape(), x_shape))
        for i, v in ((1, op.gamma), (2, op.beta))
    ]
    return [standardized(lw, op.x, lw.result_dtype(), axes, op.eps.value.data, centred, affine)]


@LOWERINGS.register(norm.LayerNormOp)
def lower_layer_norm(lw: Lowering, op: norm.LayerNormOp) -> Sequence[SSAValue]:
    return _axis_norm(lw, op, centred=True)


@LOWERINGS.register(norm.RmsNormOp)
def lower_rms_norm(lw: Lowering, op: norm.RmsNormOp) -> Sequence[SSAValue]:
    return _axis_norm(lw, op, centred=False)


@LOWERINGS.register(norm.GroupNormOp)
def lower_group_norm(lw: Lowering, op: norm.GroupNormOp) -> Sequence[SSAValue]:
    """Normalise `x` viewed as `[N, G, C/G, spatial...]` over all dims after G."""
    groups = op.num_groups.value.data
    n, channels, *spatial = lw.dims(op.x)
    per_group: Dim = lw.quotient(channels, groups)
    rank = 3 + len(spatial)
    split = [[0], [1, 2], *([i] for i in range(3, rank))]
    x = lw.expand(op.x, split, [n, groups, per_group, *spatial])
    channel = loops(rank, [1, 2])  # gamma and beta [C] viewed as [G, C/G]
    affine = [
        (lw.expand(v, [[0, 1]], [groups, per_group]), lw.operand_dtype(i), channel)
        for i, v in ((1, op.gamma), (2, op.beta))
    ]
    out = standardized(lw, x, lw.result_dtype(), list(range(2, rank)), op.eps.value.data, True, affine)
    return [lw.collapse(out, [[0], [1, 2], *([i] for i in range(3, rank))])]


@LOWERINGS.register(norm.BatchNormInferenceOp)
def lower_batch_norm_inference(lw: Lowering, op: norm.BatchNormInferenceOp) -> Sequence[SSAValue]:
    """One elementwise generic: each `[C]` operand is read at x's channel loop (1)."""
    dt = lw.result_dtype()
    acc = accumulator(dt)
    rank = op.x.type.get_num_dims()
    channel = loops(rank, [1])
    eps = op.eps.value.data

    def body(s: Scalars, *elements: SSAValue) -> SSAValue:
        x, gamma, beta, mean, var = (s.cast(v, dt, acc) for v in elements[:5])
        scale = s.sqrt(s.add(var, s.constant(eps, acc), acc))
        normalised = s.div(s.sub(x, mean, acc), scale, acc)
        return s.cast(s.add(s.mul(normalised, gamma, acc), beta, acc), acc, dt)

    inputs = [(op.x, identity(rank)), *((v, channel) for v in op.operands[1:])]
    init = lw.empty(lw.dims(op.x), dt)
    return lw.generic(inputs, [(init, identity(rank))], [PARALLEL] * rank, body)
