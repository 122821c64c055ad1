"""MIR sequences both importers emit for ops that have no MIR op of their own.

Each takes the emitter and the operand's RLX dtype name, so the PyTorch and ONNX rules
share one definition of each formula.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.ir.emitter import Emitter


def _const(e: Emitter, value, dtype: str) -> SSAValue:
    return e.mir.constant(value, dtype)


def zero_signed_as(e: Emitter, result: SSAValue, x: SSAValue, dtype: str) -> SSAValue:
    """`result` with each zero given the sign of the finite `x` there, as IEEE 754 rounding
    and fmod (numpy, PyTorch, ONNX) keep it: round(-0.5), ceil(-0.7), trunc(-0.7) and
    fmod(-4, 2) are -0.0, where the steps back or up (`2x - y`, `y + 1`, `a - b * q`) give
    +0.0. `x * 0` is that signed zero. Integers have one zero."""
    if not dtype.startswith(("f", "bf")):
        return result
    zero = _const(e, 0.0, dtype)
    return e.mir.where(e.mir.compare(result, zero, "eq"), e.mir.mul(x, zero), result)


def round_half_even(e: Emitter, x: SSAValue, dtype: str) -> SSAValue:
    """Half to even (PyTorch, ONNX, numpy); `mir.round` rounds half away from zero, so a
    tie that lands on an odd number steps back to `2x - y`. Zeros keep `x`'s sign."""
    y = e.mir.round(x)
    two = _const(e, 2.0, dtype)
    tie = e.mir.compare(e.mir.abs(e.mir.sub(y, x)), _const(e, 0.5, dtype), "eq")
    odd = e.mir.compare(e.mir.mul(e.mir.round(e.mir.div(y, two)), two), y, "ne")
    rounded = e.mir.where(tie, e.mir.where(odd, e.mir.sub(e.mir.mul(x, two), y), y), y)
    return zero_signed_as(e, rounded, x, dtype)


def floor(e: Emitter, x: SSAValue, dtype: str) -> SSAValue:
    """`round(x)`, one less where that landed above `x`. Zeros keep `x`'s sign."""
    y = e.mir.round(x)
    rounded = e.mir.where(e.mir.compare(y, x, "gt"), e.mir.sub(y, _const(e, 1.0, dtype)), y)
    return zero_signed_as(e, rounded, x, dtype)


def ceil(e: Emitter, x: SSAValue, dtype: str) -> SSAValue:
    """`round(x)`, one more where that landed below `x`. Zeros keep `x`'s sign."""
    y = e.mir.round(x)
    rounded = e.mir.where(e.mir.compare(y, x, "lt"), e.mir.add(y, _const(e, 1.0, dtype)), y)
    return zero_signed_as(e, rounded, x, dtype)


def trunc(e: Emitter, x: SSAValue, dtype: str) -> SSAValue:
    negative = e.mir.compare(x, _const(e, 0.0, dtype), "lt")
    return e.mir.where(negative, ceil(e, x, dtype), floor(e, x, dtype))


def sign(e: Emitter, x: SSAValue, dtype: str) -> SSAValue:
    """-1, 0 or 1; NaN stays NaN."""
    zero = _const(e, 0, dtype)
    positive = e.mir.where(e.mir.compare(x, zero, "gt"), _const(e, 1, dtype), zero)
    result = e.mir.where(e.mir.compare(x, zero, "lt"), _const(e, -1, dtype), positive)
    if dtype.startswith(("f", "bf")):
        result = e.mir.where(e.mir.compare(x, x, "ne"), x, result)
    return result


def top_k(e: Emitter, x: SSAValue, k: int, axis: int, largest: bool, dtype: str) -> tuple[SSAValue, SSAValue]:
    """`mir.topk` along any axis (moved last and back); the smallest through negation
    (floats only: negating integers would wrap). Ties keep the lower index first."""
    rank = len(x.type.get_shape())
    axis %= rank
    if not largest:
        if not dtype.startswith(("f", "bf")):
            raise ValueError(f"the smallest elements of {dtype} are not supported (only of floats)")
        x = e.mir.neg(x)
    perm = [d for d in range(rank) if d != axis] + [axis]
    moved = axis != rank - 1
    if moved:
        x = e.mir.transpose(x, perm=perm)
    values, indices = e.mir.topk(x, k=k)
    if moved:
        inverse = [perm.index(d) for d in range(rank)]
        values, indices = (e.mir.transpose(v, perm=inverse) for v in (values, indices))
    if not largest:
        values = e.mir.neg(values)
    return values, indices


def pad_constant(e: Emitter, x: SSAValue, pads: dict[int, tuple[int, int]], fill: SSAValue) -> SSAValue:
    """`x` with `(before, after)` elements of the 0-d `fill` added along each axis of `pads`
    (blocks concatenated on each side); a negative count removes elements instead. Static
    shapes only."""
    from rlx_xdsl.shapes import DYNAMIC

    for axis, (before, after) in sorted(pads.items()):
        shape = list(x.type.get_shape())
        if shape[axis] == DYNAMIC:
            raise ValueError("padding a dynamic dim is not supported")
        start, stop = max(0, -before), shape[axis] - max(0, -after)
        if start or stop != shape[axis]:
            x = e.mir.narrow(x, axis=axis, start=start, len=stop - start)
            shape[axis] = stop - start
        if DYNAMIC in shape and (before > 0 or after > 0):
            raise ValueError("padding a tensor with dynamic dims is not supported")
        parts = []
        for size in (max(0, before), None, max(0, after)):
            if size is None:
                parts.append(x)
            elif size:
                parts.append(e.mir.expand(fill, target_shape=[*shape[:axis], size, *shape[axis + 1 :]]))
        if len(parts) > 1:
            x = e.mir.concat(*parts, axis=axis)
    return x
