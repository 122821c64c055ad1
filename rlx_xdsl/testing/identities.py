"""Wrap values in ops that compute nothing: test inputs for canonicalization.

    kind = rng.choice(kinds_for(value))
    wrap(value, kind, rng)

`wrap` inserts, right after `value` is defined, a chain of MIR ops that returns
`value` unchanged (`value + 0`, `-(-value)`, a transpose and its inverse, ...)
and makes the value's existing users read the chain's result instead. A graph
wrapped like this computes the same outputs, so a pass must keep them, and
`rlx-canonicalize` must fold the chains away again.

Random choices (a permutation, which side the constant goes on, whether a zero
is a splat scalar or a full array) come from a numpy generator, so Hypothesis
can seed it and shrink.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Block, SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.ir.emitter import Emitter

Wrapper = Callable[[Emitter, SSAValue, np.random.Generator], SSAValue]


def _tensor_type(value: SSAValue) -> TensorType:
    assert isinstance(value.type, TensorType), value.type
    return value.type


def _shape(value: SSAValue) -> list[int]:
    return list(_tensor_type(value).get_shape())


def _filled(e: Emitter, value: SSAValue, number: float, rng: np.random.Generator) -> SSAValue:
    """A constant `number` of `value`'s dtype: a scalar, or an array of `value`'s shape."""
    shape = _shape(value) if rng.integers(2) else []
    return e.mir.constant(np.full(shape, number), _tensor_type(value).element_type)


def _add_zero(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    """`v + -0.0`: IEEE 754 makes `+0.0 + -0.0 = +0.0` and `-0.0 + -0.0 = -0.0` (`+0.0` would not do)."""
    zero = _filled(e, v, -0.0, rng)
    return e.mir.add(v, zero) if rng.integers(2) else e.mir.add(zero, v)


def _sub_zero(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.sub(v, _filled(e, v, 0, rng))


def _mul_one(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    one = _filled(e, v, 1, rng)
    return e.mir.mul(v, one) if rng.integers(2) else e.mir.mul(one, v)


def _neg_neg(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.neg(e.mir.neg(v))


def _reshape_pair(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.reshape(e.mir.reshape(v, new_shape=[-1]), new_shape=_shape(v))


def _identity_reshape(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.reshape(v, new_shape=_shape(v))


def _transpose_pair(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    perm = [int(p) for p in rng.permutation(len(_shape(v)))]
    inverse = [int(i) for i in np.argsort(perm)]
    return e.mir.transpose(e.mir.transpose(v, perm=perm), perm=inverse)


def _identity_transpose(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.transpose(v, perm=list(range(len(_shape(v)))))


def _identity_cast(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.cast(v, _tensor_type(v).element_type)


def _identity_expand(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.expand(v, target_shape=[-1 if rng.integers(2) else d for d in _shape(v)])


def _where_constant(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    """`where(true, v, 0)` or `where(false, 0, v)`; the 0 is a scalar, so v is not broadcast."""
    take_true = bool(rng.integers(2))
    cond = e.mir.constant(np.full([1] * int(rng.integers(0, len(_shape(v)) + 1)), take_true))
    other = e.mir.constant(np.zeros(()), _tensor_type(v).element_type)
    return e.mir.where(cond, v, other) if take_true else e.mir.where(cond, other, v)


def _concat_one(e: Emitter, v: SSAValue, rng: np.random.Generator) -> SSAValue:
    return e.mir.concat(v, axis=int(rng.integers(0, len(_shape(v)))))


ARITHMETIC: dict[str, Wrapper] = {
    "add_zero": _add_zero,
    "sub_zero": _sub_zero,
    "mul_one": _mul_one,
    "neg_neg": _neg_neg,
}
"""Chains that compute with the value: integer and float dtypes only."""

ANY_DTYPE: dict[str, Wrapper] = {
    "reshape_pair": _reshape_pair,
    "identity_reshape": _identity_reshape,
    "transpose_pair": _transpose_pair,
    "identity_transpose": _identity_transpose,
    "identity_cast": _identity_cast,
    "identity_expand": _identity_expand,
    "where_constant": _where_constant,
}
"""Chains that only move or select data."""

WRAPPERS: dict[str, Wrapper] = {**ARITHMETIC, **ANY_DTYPE, "concat_one": _concat_one}


def kinds_for(value: SSAValue) -> list[str]:
    """The wrapper kinds that apply to `value` (a static ranked tensor)."""
    kinds = list(ANY_DTYPE)
    if dtypes.dtype_of(_tensor_type(value).element_type).kind in ("int", "uint", "float"):
        kinds += ARITHMETIC
    if _shape(value):
        kinds.append("concat_one")
    return kinds


def wrap(value: SSAValue, kind: str, rng: np.random.Generator) -> SSAValue:
    """Insert the `kind` chain after `value`'s definition; its users now read the chain."""
    owner = value.owner
    anchor = owner.first_op if isinstance(owner, Block) else owner.next_op
    assert anchor is not None, "a value defined by a block's last op has no users to redirect"
    users = {use.operation for use in value.uses}
    wrapped = WRAPPERS[kind](Emitter.before(anchor), value, rng)
    value.replace_uses_with_if(wrapped, lambda use: use.operation in users)
    return wrapped
