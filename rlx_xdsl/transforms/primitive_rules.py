"""softmax, layer_norm and rms_norm as primitive MIR (reduce and elementwise ops), the
`rlx-legalize` rules that take them to the `primitive` target.

Each follows its kernel's formula (`interpreters/mir/reduction.py`, `norm.py`): softmax
subtracts the slice maximum; the norms divide by `sqrt(statistic + eps)`. f16/bf16 are
computed in f32 and rounded once at the end, as the kernels do.
"""

from __future__ import annotations

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.norm import AxisNormOperation, LayerNormOp, RmsNormOp
from rlx_xdsl.dialects.mir.reduction import SoftmaxOp
from rlx_xdsl.emitter import Emitter

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
