"""VJP rules of matmul, dot_general and dense_solve."""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import (
    cast_to,
    element_type,
    inverse_permutation,
    transpose_last_two,
    unbroadcast,
)
from rlx_xdsl.autodiff.registry import COMPLEX_RULES, VJP_RULES, Cotangents, Gradients, always
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp, DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.ir.emitter import Emitter


def _batch(value: SSAValue) -> tuple[int, ...]:
    return tuple(tensor_type(value).get_shape()[:-2])


@VJP_RULES.register(MatmulOp)
def matmul(e: Emitter, op: MatmulOp, cotangents: Cotangents) -> Gradients:
    """`da = g @ b^T`, `db = a^T @ g`, each summed over the batch dims it was broadcast along.

    When an operand's batch dims are the result's (no broadcasting; a weight
    matrix has none), its gradient is one `dot_general` that contracts the
    right dims of `g` and the other operand, summing over the batch of `g` as it
    goes: `[B, S, D] @ [D, N]` gives `dw` without a transpose or a reduce. Other
    cases transpose, multiply and unbroadcast.
    """
    (g,) = cotangents
    batch = _batch(g)
    nb = len(batch)

    def d_lhs() -> SSAValue:
        if _batch(op.lhs) == batch and _batch(op.rhs) in (batch, ()):
            shared = list(range(nb)) if _batch(op.rhs) else []
            rhs_k = len(_batch(op.rhs)) + 1
            return e.mir.dot_general(
                g,
                op.rhs,
                lhs_contracting=[nb + 1],
                rhs_contracting=[rhs_k],
                lhs_batch=shared,
                rhs_batch=shared,
            )
        return unbroadcast(e, e.mir.matmul(g, transpose_last_two(e, op.rhs)), op.lhs)

    def d_rhs() -> SSAValue:
        if _batch(op.rhs) == batch == _batch(op.lhs):
            shared = list(range(nb))
            return e.mir.dot_general(
                op.lhs, g, lhs_contracting=[nb], rhs_contracting=[nb], lhs_batch=shared, rhs_batch=shared
            )
        if not _batch(op.rhs) and _batch(op.lhs) == batch:
            every = list(range(nb + 1))  # the batch dims and M, summed by the contraction
            return e.mir.dot_general(op.lhs, g, lhs_contracting=every, rhs_contracting=every)
        return unbroadcast(e, e.mir.matmul(transpose_last_two(e, op.lhs), g), op.rhs)

    return [
        lambda: cast_to(e, d_lhs(), element_type(op.lhs)),
        lambda: cast_to(e, d_rhs(), element_type(op.rhs)),
    ]


def _contract_back(
    e: Emitter,
    g: SSAValue,
    other: SSAValue,
    *,
    g_free: Sequence[int],
    other_free: Sequence[int],
    other_batch: Sequence[int],
    other_contracting: Sequence[int],
    own: tuple[Sequence[int], Sequence[int], Sequence[int]],
    rank: int,
) -> SSAValue:
    """The gradient of one dot_general operand: contract `g` with the other operand.

    `g`'s dims are `[batch..., lhs free..., rhs free...]`. Contracting `g`'s dims
    holding the *other* operand's free dims with those dims leaves
    `[batch..., own free..., other's contracting dims in increasing order]`;
    the latter pair with this operand's contracting dims. `own` is this operand's
    `(batch, free, contracting)` axes; a transpose puts the dims back in its order.
    """
    own_batch, own_free, own_contracting = own
    result = e.mir.dot_general(
        g,
        other,
        lhs_contracting=list(g_free),
        rhs_contracting=list(other_free),
        lhs_batch=list(range(len(own_batch))),
        rhs_batch=list(other_batch),
    )
    paired = [own_contracting[list(other_contracting).index(r)] for r in sorted(other_contracting)]
    axes = [*own_batch, *own_free, *paired]  # the operand axis held by each dim of `result`
    perm = inverse_permutation(axes)
    if perm != list(range(rank)):
        result = e.mir.transpose(result, perm=perm)
    return result


COMPLEX_RULES.add(MatmulOp, always)  # bilinear: transposes, no conjugates (JAX)


@VJP_RULES.register(DotGeneralOp)
def dot_general(e: Emitter, op: DotGeneralOp, cotangents: Cotangents) -> Gradients:
    """Each operand's gradient is `g` contracted with the other operand over its free dims."""
    (g,) = cotangents
    lc, rc, lb, rb = op.axis_lists()
    l_rank, r_rank = (tensor_type(v).get_num_dims() for v in (op.lhs, op.rhs))
    lf = [i for i in range(l_rank) if i not in lb + lc]
    rf = [j for j in range(r_rank) if j not in rb + rc]
    nb = len(lb)
    g_lhs_free = list(range(nb, nb + len(lf)))
    g_rhs_free = list(range(nb + len(lf), nb + len(lf) + len(rf)))

    def d_lhs() -> SSAValue:
        return _contract_back(
            e, g, op.rhs, g_free=g_rhs_free, other_free=rf, other_batch=rb, other_contracting=rc,
            own=(lb, lf, lc), rank=l_rank,
        )  # fmt: skip

    def d_rhs() -> SSAValue:
        return _contract_back(
            e, g, op.lhs, g_free=g_lhs_free, other_free=lf, other_batch=lb, other_contracting=lc,
            own=(rb, rf, rc), rank=r_rank,
        )  # fmt: skip

    return [lambda: unbroadcast(e, d_lhs(), op.lhs), lambda: unbroadcast(e, d_rhs(), op.rhs)]


@VJP_RULES.register(DenseSolveOp)
def dense_solve(e: Emitter, op: DenseSolveOp, cotangents: Cotangents) -> Gradients:
    """Implicit function rule of `x = A^-1 b`: `db = A^-T g`, `dA = -db x^T`.

    A vector `b` makes `x^T` a row, so the outer product is `[N, 1] @ [1, N]`.
    """
    (g,) = cotangents
    d_rhs = e.mir.dense_solve(e.mir.transpose(op.matrix, perm=[1, 0]), g)  # both gradients need it
    x = op.result

    def d_matrix() -> SSAValue:
        if tensor_type(x).get_num_dims() == 1:
            outer = e.mir.matmul(e.mir.reshape(d_rhs, new_shape=[-1, 1]), e.mir.reshape(x, new_shape=[1, -1]))
        else:
            outer = e.mir.matmul(d_rhs, e.mir.transpose(x, perm=[1, 0]))
        return unbroadcast(e, e.mir.neg(outer), op.matrix)

    return [d_matrix, lambda: unbroadcast(e, d_rhs, op.rhs)]


@VJP_RULES.register(BatchedDenseSolveOp)
def batched_dense_solve(e: Emitter, op: BatchedDenseSolveOp, cotangents: Cotangents) -> Gradients:
    """`dense_solve`'s rule per system: `db = A^-T g`, `dA = -db x^T`.

    The outer products are one batched `dot_general` (no reshape), so `?` batch, row
    and column dims all work (RLX's rule panics on any of them).
    """
    (g,) = cotangents
    d_rhs = e.mir.batched_dense_solve(e.mir.transpose(op.matrix, perm=[0, 2, 1]), g)
    contracting = [] if tensor_type(op.result).get_num_dims() == 2 else [2]

    def d_matrix() -> SSAValue:
        outer = e.mir.dot_general(
            d_rhs, op.result, lhs_contracting=contracting, rhs_contracting=contracting,
            lhs_batch=[0], rhs_batch=[0],
        )  # fmt: skip
        return cast_to(e, e.mir.neg(outer), element_type(op.matrix))

    return [d_matrix, lambda: cast_to(e, d_rhs, element_type(op.rhs))]
