"""Elementwise arithmetic, comparisons, casts and constants.

Operands are cast to the node's result dtype (PyTorch's type promotion, read from
the exported graph's metadata), and Python numbers become constants of that dtype.
"""

from __future__ import annotations

import numpy as np
import torch

from rlx_xdsl.importers import common
from rlx_xdsl.importers.torch.table import rule
from rlx_xdsl.importers.torch.types import dtype_name
from rlx_xdsl.shapes import DYNAMIC

aten = torch.ops.aten


def _binary(t, node, op: str):
    dtype = t.dtype(node)
    lhs, rhs = (t.value(a, dtype) for a in node.args[:2])
    return getattr(t.e.mir, op)(lhs, rhs)


_BINARY = {
    "add": (aten.add.Tensor, aten.add.Scalar),
    "sub": (aten.sub.Tensor, aten.sub.Scalar),
    "mul": (aten.mul.Tensor, aten.mul.Scalar),
    "div": (aten.div.Tensor, aten.div.Scalar),
    "max": (aten.maximum.default,),
    "min": (aten.minimum.default,),
    "pow": (aten.pow.Tensor_Tensor, aten.pow.Tensor_Scalar, aten.pow.Scalar),
}


def _binary_rule(op: str):
    def translate(t, node):
        alpha = node.kwargs.get("alpha", 1)
        if alpha != 1:  # add/sub: lhs ± alpha * rhs
            dtype = t.dtype(node)
            scaled = t.e.mir.mul(t.value(node.args[1], dtype), t.value(alpha, dtype))
            return getattr(t.e.mir, op)(t.value(node.args[0], dtype), scaled)
        return _binary(t, node, op)

    return translate


for _op, _overloads in _BINARY.items():
    rule(*_overloads)(_binary_rule(_op))


_UNARY = {
    "neg": aten.neg.default,
    "exp": aten.exp.default,
    "log": aten.log.default,
    "sqrt": aten.sqrt.default,
    "rsqrt": aten.rsqrt.default,
    "abs": aten.abs.default,
    "sin": aten.sin.default,
    "cos": aten.cos.default,
    "tan": aten.tan.default,
    "atan": aten.atan.default,
    "log1p": aten.log1p.default,  # the precise ops, not log(1 + x) and exp(x) - 1 (0 at x = 1e-8);
    "expm1": aten.expm1.default,  # torch's softplus, mish, logsigmoid, celu and BCE decompose to them
    "erf": aten.erf.default,
}


def _unary_rule(op: str):
    def translate(t, node):
        return getattr(t.e.mir, op)(t.value(node.args[0], t.dtype(node)))

    return translate


for _op, _overload in _UNARY.items():
    rule(_overload)(_unary_rule(_op))


_SHARED = {
    aten.round.default: common.round_half_even,  # torch.round rounds half to even
    aten.floor.default: common.floor,
    aten.ceil.default: common.ceil,
    aten.trunc.default: common.trunc,
    aten.sign.default: common.sign,
}


def _shared_rule(formula):
    def translate(t, node):
        dtype = t.dtype(node)
        return formula(t.e, t.value(node.args[0], dtype), dtype)

    return translate


for _overload, _formula in _SHARED.items():
    rule(_overload)(_shared_rule(_formula))


_ROUNDED_DIVISION = {"floor": common.floor_divide, "trunc": common.trunc_divide}


@rule(aten.div.Tensor_mode, aten.div.Scalar_mode)
def div_mode(t, node):
    """`torch.div(a, b, rounding_mode=None | "trunc" | "floor")`."""
    mode = node.kwargs.get("rounding_mode")
    dtype = t.dtype(node)
    a, b = (t.value(v, dtype) for v in node.args[:2])
    if mode is None:
        return t.e.mir.div(a, b)
    return _ROUNDED_DIVISION[mode](t.e, a, b, dtype)


@rule(aten.floor_divide.default, aten.floor_divide.Scalar)
def floor_divide(t, node):
    """`a // b`."""
    dtype = t.dtype(node)
    return common.floor_divide(t.e, *(t.value(v, dtype) for v in node.args[:2]), dtype)


@rule(aten.fmod.Tensor, aten.fmod.Scalar)
def fmod(t, node):
    """C's `fmod`: the remainder of truncating division, with the sign of `a`."""
    dtype = t.dtype(node)
    return common.fmod(t.e, *(t.value(v, dtype) for v in node.args[:2]), dtype)


@rule(aten.reciprocal.default)
def reciprocal(t, node):
    dtype = t.dtype(node)
    return t.e.mir.div(t.value(1.0, dtype), t.value(node.args[0], dtype))


_COMPARE = {
    "eq": (aten.eq.Tensor, aten.eq.Scalar),
    "ne": (aten.ne.Tensor, aten.ne.Scalar),
    "lt": (aten.lt.Tensor, aten.lt.Scalar),
    "le": (aten.le.Tensor, aten.le.Scalar),
    "gt": (aten.gt.Tensor, aten.gt.Scalar),
    "ge": (aten.ge.Tensor, aten.ge.Scalar),
}


def _compare_rule(predicate: str):
    def translate(t, node):
        lhs, rhs = node.args[:2]
        metas = [t.meta(a) if isinstance(a, torch.fx.Node) else a for a in (lhs, rhs)]
        common = torch.result_type(*metas)
        dtype = _dtype(t, common)
        return t.e.mir.compare(t.value(lhs, dtype), t.value(rhs, dtype), predicate)

    return translate


def _dtype(t, torch_dtype):
    return dtype_name(torch_dtype, t.where)


for _predicate, _overloads in _COMPARE.items():
    rule(*_overloads)(_compare_rule(_predicate))


@rule(aten.where.self, aten.where.ScalarSelf, aten.where.ScalarOther, aten.where.Scalar)
def where(t, node):
    dtype = t.dtype(node)
    cond, on_true, on_false = node.args
    return t.e.mir.where(t.value(cond), t.value(on_true, dtype), t.value(on_false, dtype))


@rule(aten.logical_not.default, aten.bitwise_not.default)
def logical_not(t, node):
    if t.dtype(node) != "i1":
        raise t.fail("bitwise not of integers is not supported")
    return t.e.mir.compare(t.value(node.args[0], "i1"), t.value(False, "i1"), "eq")


@rule(aten.bitwise_and.Tensor, aten.logical_and.default)
def logical_and(t, node):
    """On booleans `and` is a product (i1 operands compute as 0 and 1)."""
    if t.dtype(node) != "i1":
        raise t.fail("bitwise and of integers is not supported")
    return t.e.mir.mul(*(t.value(a, "i1") for a in node.args[:2]))


@rule(aten.bitwise_or.Tensor, aten.logical_or.default)
def logical_or(t, node):
    """On booleans `or` is a maximum."""
    if t.dtype(node) != "i1":
        raise t.fail("bitwise or of integers is not supported")
    return t.e.mir.max(*(t.value(a, "i1") for a in node.args[:2]))


@rule(aten._assert_tensor_metadata.default)
def assert_metadata(t, node):
    """A dtype/device check the export already made on the traced values: no value."""
    return None


@rule(aten._to_copy.default, aten.clone.default, aten.alias.default, aten.lift_fresh_copy.default)
def copy(t, node):
    """Copies are values here; `_to_copy` may also change the dtype."""
    return t.value(node.args[0], t.dtype(node))


@rule(aten.full.default)
def full(t, node):
    """The fill broadcast to the shape; its dynamic sizes (input sizes, `Dim`s) are read at
    run time from the input they come from (`like`)."""
    shape, dtype = t.shape(node), t.dtype(node)
    fill = t.value(node.args[1], dtype)
    if DYNAMIC not in shape:
        return t.e.mir.expand(fill, target_shape=shape)
    like, like_dims = t.like_sizes(node)
    return t.e.mir.expand(fill, target_shape=[-1 if d == DYNAMIC else d for d in shape], like=like, like_dims=like_dims)


@rule(aten.empty_permuted.default, aten.empty.memory_format)
def empty(t, node):
    """An uninitialised tensor (`torch.empty_like`'s `empty_permuted`): PyTorch leaves its
    elements undefined; here they are zeros, sized as `full`."""
    shape, dtype = t.shape(node), t.dtype(node)
    zero = t.value(0, dtype)
    if DYNAMIC not in shape:
        return t.e.mir.expand(zero, target_shape=shape)
    like, like_dims = t.like_sizes(node)
    return t.e.mir.expand(zero, target_shape=[-1 if d == DYNAMIC else d for d in shape], like=like, like_dims=like_dims)


@rule(aten.scalar_tensor.default)
def scalar_tensor(t, node):
    return t.value(node.args[0], t.dtype(node))


@rule(aten.full_like.default)
def full_like(t, node):
    """The fill broadcast to the input's shape, its `?` dims read from the input."""
    dtype, shape = t.dtype(node), t.shape(node)
    fill = t.value(node.args[1], dtype)
    if DYNAMIC not in shape:
        return t.e.mir.expand(fill, target_shape=shape)
    like_dims = [i if d == DYNAMIC else -1 for i, d in enumerate(shape)]
    target = [-1 if d == DYNAMIC else d for d in shape]
    return t.e.mir.expand(fill, target_shape=target, like=t.value(node.args[0]), like_dims=like_dims)


@rule(aten.arange.start_step, aten.arange.default, aten.arange.start)
def arange(t, node):
    """A static ramp is a constant; `arange(x.size(d))` of dynamic length a `mir.iota`
    sized at run time by `x`'s dim `d`."""
    args = list(node.args) + [1] * (3 - len(node.args))
    start, end, step = (0, args[0], 1) if node.target is aten.arange.default else args[:3]
    if isinstance(end, int):
        return t.constant(np.arange(start, end, step), t.dtype(node))
    if (start, step) != (0, 1):
        raise t.fail("a dynamic length with a start or step is not supported")
    like, like_dims = t.sized_by([end], [0])
    return t.e.mir.iota([DYNAMIC], t.dtype(node), dimension=0, like=like, like_dims=like_dims)
