"""softmax, layer_norm, rms_norm, rope, attention, conv and pool as primitive MIR (matmul, reduce,
elementwise and shape ops): the `rlx-legalize` rules that take them to the `primitive` target.

Each follows its kernel's formula (`interpreters/mir/reduction.py`, `norm.py`,
`attention.py`): softmax subtracts the slice maximum; the norms divide by
`sqrt(statistic + eps)`; rope rotates NeoX pairs of the first `n_rot` dims; attention
repeats KV heads for grouped queries, scales, softcaps, masks (a constant `[Sq, Sk]`
keep-matrix for the positional masks, which needs both lengths static) and takes a
softmax whose fully masked rows are 0, as the kernel; conv gathers its windows with
narrow, reshape and concat (strides as a split axis, padding as concatenated zeros) and
multiplies them by the weights in one grouped matmul; pool gathers its windows the
same way and reduces them (max, or a sum divided by the count of real cells). f16/bf16 are computed in f32 and
rounded once, as the kernels do (attention rounds its probabilities before `@ v`).
"""

from __future__ import annotations

import numpy as np
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import (
    PatternRewriter,
    RewritePattern,
    op_type_rewrite_pattern,
)

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.attention import AttentionOp, MaskKind, RopeOp
from rlx_xdsl.dialects.mir.attrs import ReduceKind
from rlx_xdsl.dialects.mir.conv import ConvOp, PoolOp
from rlx_xdsl.dialects.mir.moe import GroupedMatmulOp
from rlx_xdsl.dialects.mir.norm import AxisNormOperation, LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.reduction import SoftmaxOp
from rlx_xdsl.interpreters.mir.attention import position_keep
from rlx_xdsl.interpreters.mir.conv import lowest
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.shapes import DYNAMIC, fmt_shape, shape_of
from rlx_xdsl.transforms.unfuse_rules.moe import expand_grouped_matmul

HALVES = ("f16", "bf16")


def widened(e: Emitter, value: SSAValue) -> SSAValue:
    """`value` in f32 when it is f16/bf16 (the kernels' accumulation dtype)."""
    if dtypes.dtype_of(tensor_type(value).element_type).name in HALVES:
        return e.mir.cast(value, f32)
    return value


def narrowed(e: Emitter, value: SSAValue, like: SSAValue) -> SSAValue:
    et = tensor_type(like).element_type
    return value if tensor_type(value).element_type == et else e.mir.cast(value, et)


def softmax(e: Emitter, op: SoftmaxOp) -> SSAValue:
    x = widened(e, op.input)
    axis = [op.normalized_axis()]
    shifted = e.mir.exp(e.mir.sub(x, e.mir.reduce(x, kind="max", axes=axis, keep_dim=True)))
    total = e.mir.reduce(shifted, kind="sum", axes=axis, keep_dim=True)
    return narrowed(e, e.mir.div(shifted, total), op.input)


def axis_norm(e: Emitter, op: AxisNormOperation, centred: bool) -> SSAValue:
    x = widened(e, op.x)
    axes = list(range(op.normalized_axis(), tensor_type(op.x).get_num_dims()))
    mean = lambda v: e.mir.reduce(v, kind="mean", axes=axes, keep_dim=True)  # noqa: E731
    if centred:
        x = e.mir.sub(x, mean(x))
    eps = e.mir.constant(op.eps.value.data, tensor_type(x).element_type)
    scale = e.mir.sqrt(e.mir.add(mean(e.mir.mul(x, x)), eps))
    y = e.mir.add(e.mir.mul(e.mir.div(x, scale), widened(e, op.gamma)), widened(e, op.beta))
    return narrowed(e, y, op.x)


def rope(e: Emitter, op: RopeOp) -> SSAValue:
    x, cos, sin = (widened(e, v) for v in (op.x, op.cos, op.sin))
    width, half = tensor_type(op.x).get_shape()[-1], op.n_rot.value.data // 2
    x1, x2 = (e.mir.narrow(x, axis=-1, start=start, len=half) for start in (0, half))
    parts = [e.mir.sub(e.mir.mul(x1, cos), e.mir.mul(x2, sin)), e.mir.add(e.mir.mul(x2, cos), e.mir.mul(x1, sin))]
    if width > 2 * half:
        parts.append(e.mir.narrow(x, axis=-1, start=2 * half, len=width - 2 * half))
    return narrowed(e, e.mir.concat(*parts, axis=-1), op.x)


def softmax_or_zero(e: Emitter, scores: SSAValue) -> SSAValue:
    """Softmax over the last axis; a fully `-inf` row gives zeros (the kernel's rule)."""
    et = tensor_type(scores).element_type
    zero, one, neg_inf = (e.mir.constant(v, et) for v in (0.0, 1.0, float("-inf")))
    row_max = e.mir.reduce(scores, kind="max", axes=[-1], keep_dim=True)
    row_max = e.mir.where(e.mir.compare(row_max, neg_inf, "eq"), zero, row_max)
    exps = e.mir.exp(e.mir.sub(scores, row_max))
    total = e.mir.reduce(exps, kind="sum", axes=[-1], keep_dim=True)
    return e.mir.div(exps, e.mir.where(e.mir.compare(total, zero, "eq"), one, total))


def repeated_heads(e: Emitter, kv: SSAValue, num_heads: int) -> SSAValue:
    """`[B, Hkv, S, D]` with each head repeated for its `num_heads / Hkv` query heads."""
    b, hkv, s, d = tensor_type(kv).get_shape()
    if hkv == num_heads:
        return kv
    spread = e.mir.expand(e.mir.reshape(kv, new_shape=[b, hkv, 1, s, d]), target_shape=[b, hkv, num_heads // hkv, s, d])
    return e.mir.reshape(spread, new_shape=[b, num_heads, s, d])


def attention(e: Emitter, op: AttentionOp) -> SSAValue:
    q_type = tensor_type(op.q)
    if DYNAMIC in q_type.get_shape() or DYNAMIC in tensor_type(op.k).get_shape():
        raise OpError(op, f"'{op.name}' cannot be rewritten: q and k need static shapes, got {fmt_shape(q_type.get_shape())}")
    num_heads = op.num_heads.value.data
    q, k, v = widened(e, op.q), widened(e, op.k), op.v
    k, v = repeated_heads(e, k, num_heads), repeated_heads(e, v, num_heads)
    et = tensor_type(q).element_type
    scores = e.mir.mul(e.mir.matmul(q, e.mir.transpose(k, perm=[0, 1, 3, 2])), e.mir.constant(op.scale(), et))
    if op.attn_logit_softcap is not None:
        cap = e.mir.constant(op.attn_logit_softcap.value.data, et)
        scores = e.mir.mul(cap, e.mir.tanh(e.mir.div(scores, cap)))
    sq, sk = q_type.get_shape()[2], tensor_type(op.k).get_shape()[2]
    window = op.window.value.data if op.window is not None else None
    keep = position_keep(op.kind, window, sq, sk)
    if keep is not None:
        keep = e.mir.constant(keep, "i1")
    if op.kind == MaskKind.CUSTOM:
        b = tensor_type(op.mask).get_shape()[0]
        keep = e.mir.reshape(e.mir.compare(op.mask, e.mir.constant(0.5, tensor_type(op.mask).element_type), "ge"), new_shape=[b, 1, 1, sk])
    if op.kind == MaskKind.BIAS:
        scores = e.mir.add(scores, widened(e, op.mask) if tensor_type(op.mask).element_type != et else op.mask)
    if keep is not None:
        scores = e.mir.where(keep, scores, e.mir.constant(float("-inf"), et))
    probs = narrowed(e, softmax_or_zero(e, scores), op.q)
    return e.mir.matmul(probs, v)


def filled(e: Emitter, shape: list[int], et, fill=0.0) -> SSAValue:
    return e.mir.expand(e.mir.constant(np.asarray(fill, dtypes.numpy_dtype(et)), et), target_shape=shape)


def padded(e: Emitter, x: SSAValue, axis: int, before: int, after: int, fill=0.0) -> SSAValue:
    """`x` with `before` and `after` rows of `fill` along `axis` (a concat)."""
    if before == after == 0:
        return x
    shape = list(tensor_type(x).get_shape())
    et = tensor_type(x).element_type
    parts = [filled(e, [*shape[:axis], before, *shape[axis + 1 :]], et, fill)] if before else []
    parts.append(x)
    if after:
        parts.append(filled(e, [*shape[:axis], after, *shape[axis + 1 :]], et, fill))
    return e.mir.concat(*parts, axis=axis)


def strided(e: Emitter, x: SSAValue, axis: int, start: int, count: int, step: int) -> SSAValue:
    """`x[..., start : start + count * step : step, ...]` along `axis` with narrow and reshape."""
    taken = e.mir.narrow(x, axis=axis, start=start, len=count * step)
    if step == 1:
        return taken
    shape = list(tensor_type(taken).get_shape())
    split = e.mir.reshape(taken, new_shape=[*shape[:axis], count, step, *shape[axis + 1 :]])
    first = e.mir.narrow(split, axis=axis + 1, start=0, len=1)
    return e.mir.reshape(first, new_shape=[*shape[:axis], count, *shape[axis + 1 :]])


def conv(e: Emitter, op: ConvOp) -> SSAValue:
    """im2col with shape ops, then one grouped matmul: `w[g, Co/g, C/g*kh*kw] @ patches[N, g, C/g*kh*kw, Ho*Wo]`."""
    x_type, out_type = tensor_type(op.x), tensor_type(op.result)
    if DYNAMIC in x_type.get_shape() or DYNAMIC in tensor_type(op.w).get_shape():
        raise OpError(op, f"'{op.name}' cannot be rewritten: x and w need static shapes, got {fmt_shape(x_type.get_shape())}")
    n, c, h, w = x_type.get_shape()
    cout, per_group, kh, kw = tensor_type(op.w).get_shape()
    _, _, ho, wo = out_type.get_shape()
    groups = op.groups.value.data
    stride, dilation = op.pair("stride"), op.dilation_pair()
    x = window_padded(e, op, op.x, (kh, kw), stride, dilation)
    cells = [
        e.mir.reshape(cell, new_shape=[n, c, 1, ho * wo])
        for cell in window_cells(e, x, (kh, kw), stride, dilation, (ho, wo))
    ]
    patches = e.mir.concat(*cells, axis=2) if len(cells) > 1 else cells[0]
    patches = e.mir.reshape(patches, new_shape=[n, groups, per_group * kh * kw, ho * wo])
    weights = e.mir.reshape(op.w, new_shape=[groups, cout // groups, per_group * kh * kw])
    return e.mir.reshape(e.mir.matmul(weights, patches), new_shape=[n, cout, ho, wo])


def window_cells(
    e: Emitter, x: SSAValue, kernel: tuple[int, int], stride: tuple[int, int], dilation: tuple[int, int], out: tuple[int, int]
) -> list[SSAValue]:
    """The `kh * kw` cells of every window of the (already padded) `x[N, C, H, W]`, each
    `[N, C, Ho, Wo]`: cell `(a, b)` of window `(i, j)` is `x[.., i sh + a dh, j sw + b dw]`."""
    cells = []
    for a in range(kernel[0]):
        rows = strided(e, x, 2, a * dilation[0], out[0], stride[0])
        cells += [strided(e, rows, 3, b * dilation[1], out[1], stride[1]) for b in range(kernel[1])]
    return cells


def window_padded(e: Emitter, op, x: SSAValue, kernel, stride, dilation, fill=0.0) -> SSAValue:
    """`x` padded by the op's padding, and after it as far as the last window's strided reads reach."""
    (h, w), (ho, wo) = tensor_type(x).get_shape()[2:], tensor_type(op.result).get_shape()[2:]
    (ph, pw), (kh, kw), (sh, sw), (dh, dw) = op.pair("padding"), kernel, stride, dilation
    x = padded(e, x, 2, ph, max(ph, (kh - 1) * dh + sh * ho - h - ph), fill)
    return padded(e, x, 3, pw, max(pw, (kw - 1) * dw + sw * wo - w - pw), fill)


def real_cells(size: int, out: int, kernel: int, stride: int, pad: int) -> np.ndarray:
    """How many cells of each window along one axis lie inside the unpadded input."""
    starts = np.arange(out) * stride - pad
    return np.minimum(starts + kernel, size) - np.maximum(starts, 0)


def pool(e: Emitter, op: PoolOp) -> SSAValue:
    """The windows' cells stacked on a new axis 2 and reduced over it: max with the dtype's
    lowest value as padding (it never wins), mean as a sum divided by each window's count
    of real cells (a constant), accumulated in f32 for f16/bf16 as the kernel."""
    x_type, out_type = tensor_type(op.x), tensor_type(op.result)
    if DYNAMIC in x_type.get_shape():
        raise OpError(op, f"'{op.name}' cannot be rewritten: x needs a static shape, got {fmt_shape(x_type.get_shape())}")
    n, c, h, w = x_type.get_shape()
    ho, wo = out_type.get_shape()[2:]
    kernel, stride = op.pair("kernel_size"), op.pair("stride")
    is_max = op.kind.data == ReduceKind.MAX
    x = op.x if is_max else widened(e, op.x)
    fill = lowest(dtypes.numpy_dtype(x_type.element_type)) if is_max else 0.0
    x = window_padded(e, op, x, kernel, stride, (1, 1), fill)
    cells = [e.mir.reshape(cell, new_shape=[n, c, 1, ho, wo]) for cell in window_cells(e, x, kernel, stride, (1, 1), (ho, wo))]
    stacked = e.mir.concat(*cells, axis=2) if len(cells) > 1 else cells[0]
    if is_max:
        return e.mir.reduce(stacked, kind="max", axes=[2], keep_dim=False)
    (ph, pw), et = op.pair("padding"), tensor_type(x).element_type
    count = np.outer(real_cells(h, ho, kernel[0], stride[0], ph), real_cells(w, wo, kernel[1], stride[1], pw))
    total = e.mir.reduce(stacked, kind="sum", axes=[2], keep_dim=False)
    return narrowed(e, e.mir.div(total, e.mir.constant(count.astype(dtypes.numpy_dtype(et)), et)), op.x)


class SoftmaxAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: SoftmaxOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, softmax(e, op))


class LayerNormAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: LayerNormOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, axis_norm(e, op, centred=True))


class RmsNormAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RmsNormOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, axis_norm(e, op, centred=False))


class RopeAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: RopeOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, rope(e, op))


class AttentionAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: AttentionOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, attention(e, op))


class ConvAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: ConvOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, conv(e, op))


class PoolAsPrimitives(RewritePattern):
    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: PoolOp, rewriter: PatternRewriter) -> None:
        e = Emitter.replacing(op, rewriter)
        e.replace(op, pool(e, op))


class GroupedMatmulAsPrimitives(RewritePattern):
    """`mir.grouped_matmul` as `gather` of each row's expert weight and a batched `matmul`
    (static K and N; otherwise the op stays and rlx-legalize reports it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: GroupedMatmulOp, rewriter: PatternRewriter) -> None:
        if DYNAMIC in shape_of(op.w.type)[1:]:
            return
        e = Emitter.replacing(op, rewriter)
        e.replace(op, *expand_grouped_matmul(e, op))
