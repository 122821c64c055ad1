"""Random graphs: each either differentiates and passes a finite-difference check, or
fails with a located diagnostic naming the op that has no VJP rule.

A generated graph (`testing.graphgen`) is widened to f64, its first float output
`o` becomes the scalar loss `sum(o * c)` for a random constant `c` (the other
outputs become aux outputs), and `rlx-prepare-ad` then `rlx-grad{mode=training}`
differentiate it with respect to every float argument. Each gradient `g` must
satisfy `<g, d> = d/dt loss(x + t d)` along random directions `d` (central
differences); points where the loss has a kink along `d` (the one-sided
derivatives differ) are skipped, and so are the gradients of graphs with a
`mir.custom_fn` that has a vjp body (what the body says is the gradient, by design;
`test_structured.py` checks it). An op without a rule must be one of the known
gaps (`autodiff.rules.mir.pending()`) and the error must point at it.
"""

from __future__ import annotations

import re

import numpy as np
from hypothesis import HealthCheck, event, given, note, reject, settings
from hypothesis import strategies as st
from xdsl.dialects import func

from rlx_xdsl import dtypes
from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.autodiff.rules.mir import pending
from rlx_xdsl.dialects.mir.backward import StopGradientOp
from rlx_xdsl.dialects.mir.quant import FakeQuantizeLsqOp, FakeQuantizeOp
from rlx_xdsl.dialects.mir.splat import (
    GaussianSplatPrepareOp,
    GaussianSplatRasterizeOp,
    GaussianSplatRenderBackwardOp,
)
from rlx_xdsl.dialects.mir.structured import CustomFnOp
from rlx_xdsl.dialects.traits import Role, operand_roles
from rlx_xdsl.ir.diagnostics import OpError, verify_located
from rlx_xdsl.ir.emitter import Emitter
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import (
    module_function,
    numerical_directional,
    one_sided_derivatives,
)
from rlx_xdsl.testing.graphgen import available_ops, graphs, inputs_for
from rlx_xdsl.testing.widen import FIXED_F32_OPS, widen_to_f64, widens_fully

PROPERTY = settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
EPS = 1e-6
ESTIMATORS = (StopGradientOp, FakeQuantizeOp, FakeQuantizeLsqOp)
SPLAT_PARTS = (GaussianSplatPrepareOp, GaussianSplatRasterizeOp, GaussianSplatRenderBackwardOp)
OPS = [op for op in available_ops() if op not in ESTIMATORS + FIXED_F32_OPS + SPLAT_PARTS]
"""`stop_gradient` and the fake quantisations are left out: their gradients differ from the
derivative by design (`test_grad.py` and `tests/autodiff/test_quant.py` check them).
So are the ops widening to f64 cannot change (`widen.FIXED_F32_OPS`), and graphs with complex
values are rejected (`widens_fully`). The parts of a Gaussian-splat render are left out too:
prepare and rasterize are differentiated only once fused into a render (`test_splat_ad.py`),
and render_backward has no gradient by design (RLX's)."""


def is_float(value) -> bool:
    return dtypes.is_float(value.type.element_type)


def feeds_a_bias_mask(function, arg) -> bool:
    """An additive attention bias is a MASK operand (of `mir.attention`, a fused attention
    block, ...): by convention (RLX's too) it carries no gradient, although the loss depends on
    it smoothly. Arguments feeding a MASK operand, read from the ops' declared operand roles,
    are not checked."""
    reached = {arg}
    for op in function.walk():
        if any(v in reached for v in op.operands):
            if any(v in reached and role == Role.MASK for v, role in zip(op.operands, operand_roles(op))):
                return True
            reached.update(op.results)
    return False


def with_scalar_loss(module, rng: np.random.Generator) -> bool:
    """Make `@main` return `sum(o * c)` first (o: its first float output); False when it has none."""
    function = find_function(module, "main")
    ret = function.body.block.last_op
    outputs = list(ret.operands)
    chosen = next((o for o in outputs if is_float(o)), None)
    if chosen is None:
        return False
    e = Emitter.before(ret)
    shape = chosen.type.get_shape()
    weighted = e.mir.mul(chosen, e.mir.constant(rng.uniform(-1, 1, shape), "f64"))
    loss = e.mir.reduce(weighted, kind="sum", axes=list(range(len(shape)))) if shape else weighted
    e.insert(func.ReturnOp(loss, *(o for o in outputs if o is not chosen)))
    function.body.block.erase_op(ret)
    function.update_function_type()
    return True


@PROPERTY
@given(graphs(max_ops=10, ops=OPS), st.integers(0, 2**31 - 1))
def test_random_graphs_differentiate_or_name_the_op_without_a_rule(module, seed):
    rng = np.random.default_rng(seed)
    if not widens_fully(module):
        reject()
    widen_to_f64(module)
    if not with_scalar_loss(module, rng):
        reject()
    note(str(module))
    inputs = inputs_for(module, seed % 1000)
    outputs = run_function(module, "main", inputs)
    if not all(np.all(np.isfinite(o)) for o in outputs if o.dtype.kind == "f"):
        reject()
    function = find_function(module, "main")
    wrt = [
        a.index
        for a in graph_args(function)
        if dtypes.is_float(a.type.element_type) and not feeds_a_bias_mask(function, function.args[a.index])
    ]
    if not wrt:
        reject()
    try:
        prepare_for_ad(module, after_step=lambda step: verify_located(module))
        build_gradient(module, "main", [str(i) for i in wrt], Mode.TRAINING)
    except OpError as error:
        missing = re.fullmatch(r"'rlx-grad' no VJP rule for '(mir\.\w+)'", error.message)
        assert missing is not None, error.message
        assert missing.group(1) == error.op.name and type(error.op) in pending()
        assert error.op.parent_op() is not None  # the op is in the module: the error is located
        event(f"no VJP rule for {missing.group(1)}")
        return
    verify_located(module)
    forward = module_function(module, "main")
    results = run_function(module, "main_grad", [*inputs, np.array(1.0)])
    gradients = results[len(outputs) :]
    assert len(gradients) == len(wrt)
    if any(isinstance(op, CustomFnOp) and op.vjp is not None for op in module.walk()):
        event("a custom_fn's own vjp body: its gradient is what the body says, not checked")
        return
    for index, gradient in zip(wrt, gradients):
        assert gradient.shape == np.shape(inputs[index])
        for _ in range(2):
            direction = rng.standard_normal(np.shape(inputs[index]))
            right, left = one_sided_derivatives(forward, inputs, index, direction, np.array(1.0), EPS)
            if not np.isclose(right, left, rtol=1e-3, atol=1e-4):
                event("kink along a direction")
                reject()
            numeric = numerical_directional(forward, inputs, index, direction, np.array(1.0), EPS)
            scale = max(1.0, abs(float(outputs[0])))
            np.testing.assert_allclose(np.sum(gradient * direction), numeric, rtol=1e-4, atol=1e-6 * scale)
    event("differentiated and checked")
