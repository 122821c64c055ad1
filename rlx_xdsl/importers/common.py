"""MIR sequences both importers emit for ops that have no MIR op of their own.

Each takes the emitter and the operand's RLX dtype name, so the PyTorch and ONNX rules
share one definition of each formula.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC


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
    (blocks concatenated on each side); a negative count removes elements instead. The
    padded axes must be static; the blocks read other `?` dims from `x`."""
    for axis, (before, after) in sorted(pads.items()):
        shape = list(x.type.get_shape())
        if shape[axis] == DYNAMIC:
            raise ValueError("padding a dynamic dim is not supported")
        start, stop = max(0, -before), shape[axis] - max(0, -after)
        if start or stop != shape[axis]:
            x = e.mir.narrow(x, axis=axis, start=start, len=stop - start)
            shape[axis] = stop - start
        like_dims = [i if d == DYNAMIC else -1 for i, d in enumerate(shape)]  # other dims sized by x
        like = {"like": x, "like_dims": like_dims} if DYNAMIC in shape else {}
        parts = []
        for size in (max(0, before), None, max(0, after)):
            if size is None:
                parts.append(x)
            elif size:
                parts.append(e.mir.expand(fill, target_shape=[*shape[:axis], size, *shape[axis + 1 :]], **like))
        if len(parts) > 1:
            x = e.mir.concat(*parts, axis=axis)
    return x


def _is_float(dtype: str) -> bool:
    return dtype.startswith(("f", "bf"))


def _in_f64(e: Emitter, dtype: str, formula, *operands: SSAValue) -> SSAValue:
    """`formula(*operands)` computed in f64 for f32/f16/bf16 operands and rounded once back:
    the quotient and remainder of f32 operands are then exact (a 24-bit `b` times a
    quotient below 2^29 fits f64's 53 bits)."""
    if dtype == "f64":
        return formula(*operands)
    return e.mir.cast(formula(*(e.mir.cast(v, "f64") for v in operands)), dtype)


def fmod(e: Emitter, a: SSAValue, b: SSAValue, dtype: str) -> SSAValue:
    """C's `fmod` (`torch.fmod`, ONNX `Mod` with `fmod = 1`): `a - b * trunc(a / b)`, the sign
    of `a`. Integers: truncating division (MIR's). Floats in f64: NaN where `b = 0` or `a` is
    infinite, `a` where `b` is infinite, a zero remainder keeps `a`'s sign."""
    if not _is_float(dtype):
        return e.mir.sub(a, e.mir.mul(b, e.mir.div(a, b)))

    def formula(a, b):
        rest = e.mir.sub(a, e.mir.mul(b, trunc(e, e.mir.div(a, b), "f64")))
        infinite_b = e.mir.compare(e.mir.abs(b), _const(e, float("inf"), "f64"), "eq")
        rest = e.mir.where(infinite_b, e.mir.add(a, e.mir.mul(a, _const(e, 0.0, "f64"))), rest)  # NaN for a = inf
        zero = e.mir.compare(rest, _const(e, 0.0, "f64"), "eq")
        return e.mir.where(zero, e.mir.mul(a, _const(e, 0.0, "f64")), rest)  # -0.0 for a < 0

    return _in_f64(e, dtype, formula, a, b)


def trunc_divide(e: Emitter, a: SSAValue, b: SSAValue, dtype: str) -> SSAValue:
    """`a / b` rounded toward zero (`torch.div(rounding_mode="trunc")`): `trunc(a / b)`."""
    if not _is_float(dtype):
        return e.mir.div(a, b)
    return trunc(e, e.mir.div(a, b), dtype)


def floor_divide(e: Emitter, a: SSAValue, b: SSAValue, dtype: str) -> SSAValue:
    """`a // b` (`torch.div(rounding_mode="floor")`, Python's `//`). Integers: the truncated
    quotient, one less where the remainder is nonzero and its sign differs from `b`'s.
    Floats: CPython's and PyTorch's `div_floor` from the exact remainder (`1 // 0.1` is 9,
    where `floor(1 / 0.1)` is 10): `q = (a - fmod(a, b)) / b`, one less where the remainder's
    sign differs from `b`'s, rounded to the nearest integer; `a / b` where `b = 0`; a zero
    quotient takes the sign of `a / b`."""
    zero = _const(e, 0, dtype)
    if not _is_float(dtype):
        q = e.mir.div(a, b)
        rest = e.mir.sub(a, e.mir.mul(b, q))
        differs = e.mir.compare(e.mir.compare(rest, zero, "lt"), e.mir.compare(b, zero, "lt"), "ne")
        step = e.mir.where(e.mir.compare(rest, zero, "ne"), differs, _const(e, False, "i1"))
        return e.mir.where(step, e.mir.sub(q, _const(e, 1, dtype)), q)

    def formula(a, b):
        f64 = lambda v: _const(e, v, "f64")
        rest = fmod(e, a, b, "f64")
        div = e.mir.div(e.mir.sub(a, rest), b)
        differs = e.mir.compare(e.mir.compare(rest, f64(0.0), "lt"), e.mir.compare(b, f64(0.0), "lt"), "ne")
        step = e.mir.where(e.mir.compare(rest, f64(0.0), "ne"), differs, _const(e, False, "i1"))
        div = e.mir.where(step, e.mir.sub(div, f64(1.0)), div)
        q = floor(e, div, "f64")
        q = e.mir.where(e.mir.compare(e.mir.sub(div, q), f64(0.5), "gt"), e.mir.add(q, f64(1.0)), q)
        quotient = e.mir.div(a, b)
        q = e.mir.where(e.mir.compare(div, f64(0.0), "eq"), e.mir.mul(quotient, f64(0.0)), q)
        return e.mir.where(e.mir.compare(b, f64(0.0), "eq"), quotient, q)

    return _in_f64(e, dtype, formula, a, b)


def vector_norm(e: Emitter, x: SSAValue, order: float, axes: list[int], keep: bool, dtype: str) -> SSAValue:
    """`torch.linalg.vector_norm`: `sum(|x|^p)^(1/p)` over `axes`; p = 1 a sum of `|x|`, p = 2
    the square root of a sum of squares, p = inf / -inf the largest / smallest `|x|`, p = 0
    the count of nonzeros."""
    magnitude = e.mir.abs(x)
    if order in (float("inf"), float("-inf")):
        return e.mir.reduce(magnitude, kind="max" if order > 0 else "min", axes=axes, keep_dim=keep)
    if order == 0:
        nonzero = e.mir.cast(e.mir.compare(x, _const(e, 0.0, dtype), "ne"), dtype)
        return e.mir.reduce(nonzero, kind="sum", axes=axes, keep_dim=keep)
    if order == 1:
        return e.mir.reduce(magnitude, kind="sum", axes=axes, keep_dim=keep)
    if order == 2:
        return e.mir.sqrt(e.mir.reduce(e.mir.mul(x, x), kind="sum", axes=axes, keep_dim=keep))
    powered = e.mir.pow(magnitude, _const(e, float(order), dtype))
    total = e.mir.reduce(powered, kind="sum", axes=axes, keep_dim=keep)
    return e.mir.pow(total, _const(e, 1.0 / order, dtype))


def _reverse(e: Emitter, x: SSAValue, axis: int, size: int) -> SSAValue:
    return e.mir.gather(x, e.mir.constant(list(range(size - 1, -1, -1)), "i64"), axis=axis)


def sort(e: Emitter, x: SSAValue, axis: int, descending: bool, dtype: str) -> tuple[SSAValue, SSAValue]:
    """A stable sort along `axis` (`torch.sort(stable=True)`): the values and their i64
    indices, equal values in their original order, NaN largest (last ascending, first
    descending). Descending is `mir.topk` of every element (ties: lower index first);
    ascending is that of the reversed axis, read backwards (its ties come out highest
    index first, reversed: lowest first), indices mapped back by `size - 1 - i`. Exact
    for every dtype (no negation). A `?` size of `axis` sorts by counting (`_rank_sort`)."""
    rank = len(x.type.get_shape())
    if rank == 0:
        raise ValueError("sorting a 0-d tensor is not supported")
    axis %= rank
    size = x.type.get_shape()[axis]
    if size == DYNAMIC:
        return _rank_sort(e, x, axis, descending, dtype)
    if descending:
        return top_k(e, x, size, axis, True, dtype)
    values, indices = top_k(e, _reverse(e, x, axis, size), size, axis, True, dtype)
    last = e.mir.constant(size - 1, "i64")
    return _reverse(e, values, axis, size), e.mir.sub(last, _reverse(e, indices, axis, size))


def unsqueeze(e: Emitter, x: SSAValue, at: int) -> SSAValue:
    """`x` with a size-1 dim inserted at `at`; its `?` dims read from `x` at run time."""
    shape = list(x.type.get_shape())
    new = [*shape[:at], 1, *shape[at:]]
    source = [*range(at), -1, *range(at, len(shape))]
    like_dims = [source[i] if d == DYNAMIC else -1 for i, d in enumerate(new)]
    like = {"like": x, "like_dims": like_dims} if DYNAMIC in shape else {}
    return e.mir.reshape(x, new_shape=[-1 if d == DYNAMIC else d for d in new], **like)


def _lowest(e: Emitter, dtype: str) -> SSAValue:
    """The dtype's lowest value (-inf for floats) as a 0-d constant."""
    import numpy as np

    from rlx_xdsl.dtypes import dtype_named

    numpy = dtype_named(dtype).numpy
    return e.mir.constant(np.array(-np.inf if _is_float(dtype) else np.iinfo(numpy).min, numpy), dtype)


def _rank_sort(e: Emitter, x: SSAValue, axis: int, descending: bool, dtype: str) -> tuple[SSAValue, SSAValue]:
    """`sort` along a `?` axis (the size known only at run time, which `mir.topk`'s static
    `k` cannot take): element i goes to position `rank[i]`, the count of elements j that
    come before it (smaller, or larger when descending, or equal with j < i: stable; NaN
    largest, -0.0 equal to 0.0). Position r then takes the one i with `rank[i] == r`:
    its index, and its value as the maximum of that value and the dtype's lowest values
    (exact, signed zeros and NaN kept). Compares every pair: O(n^2) time and memory in the
    axis size n."""
    rank = len(x.type.get_shape())
    if axis != rank - 1:
        perm = [d for d in range(rank) if d != axis] + [axis]
        values, indices = _rank_sort(e, e.mir.transpose(x, perm=perm), rank - 1, descending, dtype)
        inverse = [perm.index(d) for d in range(rank)]
        return e.mir.transpose(values, perm=inverse), e.mir.transpose(indices, perm=inverse)
    mine, other = unsqueeze(e, x, rank), unsqueeze(e, x, rank - 1)  # [..., n(i), 1], [..., 1, n(j)]
    first, second = (mine, other) if descending else (other, mine)
    ahead = e.mir.compare(first, second, "lt")  # j strictly before i
    equal = e.mir.compare(mine, other, "eq")
    if _is_float(dtype):
        nan_mine, nan_other = (e.mir.compare(v, v, "ne") for v in (mine, other))
        nan_first, nan_second = (nan_mine, nan_other) if descending else (nan_other, nan_mine)
        ahead = e.mir.max(ahead, e.mir.mul(nan_second, e.mir.compare(nan_first, _const(e, False, "i1"), "eq")))
        equal = e.mir.max(equal, e.mir.mul(nan_mine, nan_other))
    size = {"like": x, "like_dims": [axis, -1]}
    i = e.mir.iota([DYNAMIC, 1], "i64", dimension=0, **size)  # [n, 1]
    j = e.mir.reshape(i, new_shape=[1, -1], like=x, like_dims=[-1, axis])  # [1, n]
    before = e.mir.max(ahead, e.mir.mul(equal, e.mir.compare(j, i, "lt")))
    ranks = e.mir.reduce(e.mir.cast(before, "i64"), kind="sum", axes=[rank])  # [..., n(i)]
    chosen = e.mir.compare(unsqueeze(e, ranks, rank - 1), i, "eq")  # [..., n(r), n(i)]
    indices = e.mir.reduce(e.mir.where(chosen, j, _const(e, 0, "i64")), kind="sum", axes=[rank])
    values = e.mir.reduce(e.mir.where(chosen, other, _lowest(e, dtype)), kind="max", axes=[rank])
    return values, indices


def pooled_size(length: int, kernel: int, stride: int, pad: int, dilation: int, ceil_mode: bool) -> int:
    """Windows along one axis (PyTorch's `pooling_output_shape`, ONNX's since opset 19):
    `(length + 2 pad - dilation (kernel - 1) - 1) / stride + 1`, rounded down, or up with
    `ceil_mode` unless the last window would start in the right padding."""
    span = length + 2 * pad - dilation * (kernel - 1) - 1
    out = -(-span // stride) + 1 if ceil_mode else span // stride + 1
    if ceil_mode and (out - 1) * stride >= length + pad:
        out -= 1
    return out


def max_pool(
    e: Emitter, x: SSAValue, kernel: list[int], stride: list[int], padding: list[int], dilation: list[int],
    ceil_mode: bool, dtype: str,
) -> SSAValue:  # fmt: skip
    """2-D max pooling of an NCHW tensor with dilation and `ceil_mode`. Without either it is
    `mir.pool`; otherwise the padding (and what `ceil_mode` adds on the right) is explicit,
    filled with the dtype's lowest value (-inf), and a dilated window is the elementwise max
    of its `kernel` taps, each a strided subsample (a 1x1 `mir.pool` of stride `stride`)."""
    if list(dilation) == [1, 1] and not ceil_mode:
        return e.mir.pool(x, kind="max", kernel_size=kernel, stride=stride, padding=padding)
    spatial = x.type.get_shape()[2:]
    if DYNAMIC in spatial:
        raise ValueError("max pooling with dilation or ceil_mode over dynamic spatial dims is not supported")
    out = [pooled_size(*args, ceil_mode) for args in zip(spatial, kernel, stride, padding, dilation)]
    pads = {}
    for axis, (length, o, k, s, p, d) in enumerate(zip(spatial, out, kernel, stride, padding, dilation), 2):
        pads[axis] = (p, (o - 1) * s + d * (k - 1) + 1 - length - p)
    x = pad_constant(e, x, pads, _lowest(e, dtype))
    if list(dilation) == [1, 1]:
        return e.mir.pool(x, kind="max", kernel_size=kernel, stride=stride, padding=[0, 0])
    result = None
    for i in range(kernel[0]):
        for j in range(kernel[1]):
            tap = e.mir.narrow(x, axis=2, start=i * dilation[0], len=(out[0] - 1) * stride[0] + 1)
            tap = e.mir.narrow(tap, axis=3, start=j * dilation[1], len=(out[1] - 1) * stride[1] + 1)
            tap = e.mir.pool(tap, kind="max", kernel_size=[1, 1], stride=stride, padding=[0, 0])
            result = tap if result is None else e.mir.max(result, tap)
    return result
