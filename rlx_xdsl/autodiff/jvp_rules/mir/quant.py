"""JVP rules of the quantisation ops, the transposes of their VJP rules.

The straight-through conventions are the reverse rules' (`autodiff/rules/mir/quant.py`),
so forward and reverse mode agree (`<g, jvp(t)> = <vjp(g), t>`), rather than the true
derivative (zero almost everywhere through a rounding):

* quantize, dequantize, qmatmul, qconv2d: zero tangent (their reverse rules give none:
  integer values carry no gradient);
* fake_quantize: `identity` passes the tangent; the other kinds apply their surrogate,
  `fake_quantize_backward(x, t)` (the op is elementwise, so its Jacobian is diagonal
  and the reverse rule's mask is its own transpose). The range state gets none;
* fake_quantize_lsq: x's mask on `t_x`, plus `k e t_s` for the step with LSQ's
  gradient scale `k` and rounding error `e`, the transpose of `_backward_scale`;
* dequant_matmul: linear in x; the quantised weights, scales and zero points get none.

The backward kernels are linear in `dy`; fake_quantize_backward's surrogate and the
LSQ input mask are piecewise constant in x and the step (tanh's is smooth: through
its decomposition); LSQ's scale gradient `k Σ dy e(x, s)` is linear in dy too: its
rounding passes straight through (`round' = 1`), so the rounding error `e` is constant
and LSQ's second derivative in the step (`k² Σ f''(y) e²`) is that of the rescaled step
`s k + stop_gradient(s - s k)`, as `jax.jvp(jax.grad(...))` gives.
"""

from __future__ import annotations

from xdsl.ir import SSAValue

from rlx_xdsl.autodiff.emit import add_tangents, unbroadcast
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES, OutTangents, Tangents, zero_tangent
from rlx_xdsl.autodiff.jvp_rules.common import linear_in, linear_rule
from rlx_xdsl.autodiff.jvp_rules.mir.backward import decomposed_term
from rlx_xdsl.autodiff.rules.mir.quant import along_channel, lsq_gradient_scale, lsq_props, ste_props
from rlx_xdsl.dialects.mir.quant import (
    DequantizeOp,
    DequantMatmulOp,
    FakeQuantizeBackwardOp,
    FakeQuantizeLsqBackwardScaleOp,
    FakeQuantizeLsqBackwardXOp,
    FakeQuantizeLsqOp,
    FakeQuantizeOp,
    QConv2dOp,
    QMatmulOp,
    QuantizeOp,
    SteKind,
)
from rlx_xdsl.ir.emitter import Emitter

JVP_RULES.register(QuantizeOp, DequantizeOp, QMatmulOp, QConv2dOp)(zero_tangent)


@JVP_RULES.register(FakeQuantizeOp)
def fake_quantize(e: Emitter, op: FakeQuantizeOp, tangents: Tangents) -> OutTangents:
    t_x = tangents[0]
    if t_x is None or op.ste.data is SteKind.IDENTITY:
        return [t_x]
    return [e.mir.fake_quantize_backward(op.x, t_x, op.state, **ste_props(op))]


@JVP_RULES.register(FakeQuantizeBackwardOp)
def fake_quantize_backward(e: Emitter, op: FakeQuantizeBackwardOp, tangents: Tangents) -> OutTangents:
    smooth = (0,) if op.ste.data is SteKind.TANH else ()
    return [add_tangents(e, linear_in(e, op, tangents, 1), decomposed_term(e, op, tangents, smooth))]


def lsq_mask(e: Emitter, op: FakeQuantizeLsqOp | FakeQuantizeLsqBackwardScaleOp, value: SSAValue) -> SSAValue:
    """`m value`: `value` where `x / s` rounds into the grid, else 0."""
    return e.mir.fake_quantize_lsq_backward_x(op.x, op.scale, value, **lsq_props(op))


@JVP_RULES.register(FakeQuantizeLsqOp)
def fake_quantize_lsq(e: Emitter, op: FakeQuantizeLsqOp, tangents: Tangents) -> OutTangents:
    """`m t_x + k e t_s` with `e = (fake_quantize_lsq(x, s) - m x) / s`."""
    t_x, t_s = tangents
    step_term = None
    if t_s is not None:
        step = along_channel(e, op, op.scale)
        error = e.mir.div(e.mir.sub(op.result, lsq_mask(e, op, op.x)), step)
        weight = e.mir.mul(along_channel(e, op, t_s), lsq_gradient_scale(e, op))
        step_term = unbroadcast(e, e.mir.mul(error, weight), op.x)  # a rank-0 x against a [1] step
    return [add_tangents(e, t_x and lsq_mask(e, op, t_x), step_term)]


JVP_RULES.register(FakeQuantizeLsqBackwardXOp, FakeQuantizeLsqBackwardScaleOp)(linear_rule(2))


JVP_RULES.register(DequantMatmulOp)(linear_rule(0))
