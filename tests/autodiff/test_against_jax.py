"""Composite graphs differentiated by `rlx-prepare-ad` + `rlx-grad`, against `jax.vjp`.

The forward graphs run in f32 on both sides: the interpreter runs `@f_grad`, and
`testing.jax_oracle` evaluates `@f` with jax.numpy formulas written independently
of the kernels and the VJP rules; gradients agree to 2e-3 (JAX's `check_grads`
tolerance for f32).
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing import model_graphs
from rlx_xdsl.testing.jax_oracle import jax_vjp
from rlx_xdsl.testing.llama import build_llama

TOL = 2e-3
RNG = np.random.default_rng(99)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def compare_with_jax(module, name, inputs, cotangent=None):
    """Gradients of every rlx.param argument: rlx-grad's against jax.vjp's."""
    function = find_function(module, name)
    wrt = [a.index for a in graph_args(function) if a.is_param]
    if cotangent is None:
        cotangent = np.ones(function.function_type.outputs.data[0].get_shape(), np.float32)
    expected_loss, expected = jax_vjp(module, name, inputs, wrt, cotangent)
    prepare_for_ad(module)
    build_gradient(module, name)
    module.verify()
    loss, *rest = run_function(module, f"{name}_grad", [*inputs, cotangent])
    np.testing.assert_allclose(loss, expected_loss, rtol=TOL, atol=TOL)
    gradients = rest[len(rest) - len(wrt) :]
    for index, got, want in zip(wrt, gradients, expected, strict=True):
        assert got.shape == want.shape, graph_args(function)[index].name
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL, err_msg=graph_args(function)[index].name)
        assert np.abs(want).max() > 1e-3, "a vanishing gradient would prove nothing"


def test_mlp_with_softmax_cross_entropy_loss():
    inputs = [
        rand(8, 16),
        RNG.integers(0, 10, 8),
        rand(16, 32, scale=0.3),
        rand(32),
        rand(32, 10, scale=0.3),
        rand(10),
    ]
    compare_with_jax(model_graphs.mlp(8, 16, 32, 10), "loss", inputs)


def test_conv_net_with_max_and_mean_pooling():
    inputs = [
        rand(2, 1, 8, 8),
        RNG.integers(0, 10, 2),
        rand(4, 1, 3, 3),
        rand(1, 4, 1, 1),
        rand(6, 4, 3, 3, scale=0.3),
        rand(24, 10, scale=0.3),
    ]
    compare_with_jax(model_graphs.conv_net_with_pooling(), "loss", inputs)


def test_one_llama_decoder_layer():
    """Grouped-query attention (repeat_kv by narrow/concat), rope, rms_norm, SwiGLU;
    seeded by a random cotangent."""
    dims = {"batch": 1, "seq": 4, "dim": 16, "n_heads": 2, "n_kv_heads": 1, "ffn": 24}
    module = build_llama(1, **dims)
    inputs = model_graphs.llama_inputs(module, rand(1, 4, 16), dims, rand)
    compare_with_jax(module, "llama", inputs, cotangent=rand(1, 4, 16))


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_a_graph_through_if_and_while(sign):
    """`mir.if` (JAX: `lax.cond`) picks a branch by the sign of `sum(x)`; a bounded `mir.while`
    stops after 2 of its 3 allowed steps (JAX: the same steps, frozen once the condition fails)."""
    b = GraphBuilder("loss")
    x, w = b.param("x", [2, 4]), b.param("w", [4, 4])
    h = model_graphs.if_and_while(b, x, w)
    b.output(b.reduce(b.mul(h, h), kind="sum", axes=[0, 1]))
    x0 = sign * (np.abs(rand(2, 4)) + 0.1)
    compare_with_jax(b.module(), "loss", [x0, rand(4, 4, scale=0.5)])
