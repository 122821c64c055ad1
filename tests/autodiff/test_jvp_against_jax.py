"""`rlx-jvp` and `rlx-hvp` on whole graphs, against `jax.jvp` and `jax.jvp(jax.grad(f))`.

JAX evaluates `@f` through `conversions.mir_to_jax` (formulas written from the
ops' semantics, independent of the kernels and of both rule registries). The
graphs run in f32 on both sides; results agree to 2e-3 (JAX's `check_grads`
tolerance for f32). The scan RNN (`examples/rnn_scan.mlir`, `mir.scan` as
`lax.scan`) and a graph around a `mir.custom_fn` (JAX differentiates it through its
jvp body, `custom_rule="jvp"`) are checked the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")
import jax.numpy as jnp  # noqa: E402

from rlx_xdsl.autodiff.hvp import build_hvp  # noqa: E402
from rlx_xdsl.autodiff.jvp import build_jvp  # noqa: E402
from rlx_xdsl.autodiff.prepare import prepare_for_ad  # noqa: E402
from rlx_xdsl.building.builder import GraphBuilder  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.ir.graph import (
    find_function,
    graph_args,  # noqa: E402
)
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing import model_graphs  # noqa: E402
from rlx_xdsl.testing.jax_oracle import jax_function  # noqa: E402
from rlx_xdsl.testing.llama import build_llama  # noqa: E402
from rlx_xdsl.testing.training import build_llama_loss  # noqa: E402

jax.config.update("jax_enable_x64", True)
TOL = 2e-3
RNG = np.random.default_rng(26)


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def _params(module, name):
    return [a.index for a in graph_args(find_function(module, name)) if a.is_param]


def _restricted(module, name, inputs, wrt, custom_rule="vjp"):
    f = jax_function(module, name, custom_rule=custom_rule)

    def g(*chosen):
        args = list(map(jnp.asarray, inputs))
        for index, value in zip(wrt, chosen):
            args[index] = value
        return f(*args)

    return g


def compare_jvp(module, inputs, name, prepare=True, wrt=None, custom_rule="vjp"):
    """Every result's tangent along random tangents of `wrt` (default: the rlx.param arguments):
    rlx-jvp's and jax.jvp's."""
    wrt = _params(module, name) if wrt is None else wrt
    tangents = [rand(*np.shape(inputs[i])) for i in wrt]
    g = _restricted(module, name, inputs, wrt, custom_rule)
    pushed = jax.jit(lambda p, t: jax.jvp(lambda *c: tuple(g(*c)), p, t))  # one compile, not one per op
    want_out, want_tan = pushed([jnp.asarray(inputs[i]) for i in wrt], tangents)
    if prepare:
        prepare_for_ad(module)
    build_jvp(module, name, [str(i) for i in wrt])
    module.verify()
    outputs = run_function(module, f"{name}_jvp", [*inputs, *tangents])
    count = len(outputs) // 2
    for got, want in zip(outputs[:count], want_out, strict=True):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    for got, want in zip(outputs[count:], want_tan, strict=True):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    assert max(np.abs(np.asarray(t)).max() for t in want_tan) > 1e-3, "a vanishing tangent would prove nothing"


def compare_hvp(module, inputs, name, wrt=None, custom_rule="vjp"):
    """rlx-hvp's `(loss, grads, Hv)` against `jax.grad` and `jax.jvp(jax.grad(f))`."""
    wrt = _params(module, name) if wrt is None else wrt
    vs = [rand(*np.shape(inputs[i])) for i in wrt]
    g = _restricted(module, name, inputs, wrt, custom_rule)

    def gradient(*chosen):
        return jax.grad(lambda *c: g(*c)[0], argnums=tuple(range(len(wrt))))(*chosen)

    primals = [jnp.asarray(inputs[i]) for i in wrt]
    want_grads, want_hv = jax.jit(lambda p, t: jax.jvp(gradient, p, t))(primals, vs)  # one compile, not one per op
    prepare_for_ad(module)
    build_hvp(module, name, [str(i) for i in wrt])
    module.verify()
    loss, *rest = run_function(module, f"{name}_hvp", [*inputs, *vs])
    np.testing.assert_allclose(loss, jax.jit(g)(*primals)[0], rtol=TOL, atol=TOL)
    grads, hv = rest[: len(wrt)], rest[len(wrt) :]
    for got, want in zip([*grads, *hv], [*want_grads, *want_hv], strict=True):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    assert max(np.abs(np.asarray(h)).max() for h in want_hv) > 1e-3


def mlp(activation="relu"):
    inputs = [rand(6, 8), RNG.integers(0, 5, 6), rand(8, 12, scale=0.3), rand(12), rand(12, 5, scale=0.3), rand(5)]
    return model_graphs.mlp(6, 8, 12, 5, activation), inputs


def conv_net():
    b = GraphBuilder("loss")
    x = b.input("x", [2, 1, 6, 6])
    labels = b.input("labels", [2], "i64")
    w1, b1 = b.param("w1", [3, 1, 3, 3]), b.param("b1", [1, 3, 1, 1])
    w2 = b.param("w2", [3 * 9, 4])
    h = b.tanh(b.add(b.conv(x, w1, kernel_size=[3, 3], padding=[1, 1]), b1))
    h = b.pool(h, kind="max", kernel_size=[2, 2])
    model_graphs.mean_sce(b, b.matmul(b.reshape(h, new_shape=[2, 27]), w2), labels)
    inputs = [rand(2, 1, 6, 6), RNG.integers(0, 4, 2), rand(3, 1, 3, 3), rand(1, 3, 1, 1), rand(27, 4, scale=0.3)]
    return b.module(), inputs


LLAMA_DIMS = {"batch": 1, "seq": 4, "dim": 8, "n_heads": 2, "n_kv_heads": 1, "ffn": 12}


def llama_layer():
    module = build_llama(1, **LLAMA_DIMS)
    return module, model_graphs.llama_inputs(module, rand(1, 4, 8), LLAMA_DIMS, rand)


def test_jvp_of_mlp_with_softmax_cross_entropy():
    compare_jvp(*mlp(), name="loss")


def test_jvp_of_conv_net_with_max_pool():
    compare_jvp(*conv_net(), name="loss")


def test_jvp_of_a_llama_decoder_layer():
    module, inputs = llama_layer()
    compare_jvp(module, inputs, "llama")


def if_while_graph():
    b = GraphBuilder("loss")
    x, w = b.param("x", [2, 4]), b.param("w", [4, 4])
    h = model_graphs.if_and_while(b, x, w)
    b.output(b.reduce(b.mul(h, h), kind="sum", axes=[0, 1]))
    return b.module()


@pytest.mark.parametrize("sign", [1.0, -1.0], ids=["then", "else"])
def test_jvp_through_if_and_while_kept_as_regions(sign):
    """No rlx-prepare-ad: `mir.if` and `mir.while` are rebuilt over (value, tangent) by their
    own rules (the while stops after 2 of its 3 allowed steps)."""
    module = if_while_graph()
    x0 = sign * (np.abs(rand(2, 4)) + 0.1)
    compare_jvp(module, [x0, rand(4, 4, scale=0.5)], "loss", prepare=False)
    text = str(module)
    assert "mir.if" in text and "mir.while" in text


def test_hvp_of_a_tanh_mlp():
    compare_hvp(*mlp("tanh"), name="loss")


def test_hvp_of_conv_net():
    compare_hvp(*conv_net(), name="loss")


def test_hvp_of_the_llama_training_loss():
    """One decoder layer with its SCE loss (`testing.training.build_llama_loss`): attention,
    rope, rms_norm and SwiGLU in the gradient, pushed forward along v."""
    module = build_llama_loss(1, vocab=8, **LLAMA_DIMS)
    inputs = model_graphs.llama_inputs(module, rand(1, 4, 8), LLAMA_DIMS, rand)
    params = _params(module, "llama")
    compare_hvp(module, inputs, "llama", [params[0], params[1], params[-1]])  # a norm, attention, the head


def rnn_scan():
    """`examples/rnn_scan.mlir`: an Elman RNN as one `mir.scan` (weights as bcasts, the
    sequence as xs) and a squared-error loss on its last state."""
    module = parse_module((Path(__file__).parents[2] / "examples/rnn_scan.mlir").read_text())
    function = find_function(module, "rnn_loss")
    inputs = [rand(*t.get_shape(), scale=0.5) for t in function.function_type.inputs]
    return module, inputs


def test_jvp_of_the_scan_rnn_along_weights_and_inputs():
    """One scan over (carry, tangent carry) against `jax.jvp` of `lax.scan`, along every
    float argument (initial state, sequence, target and the three weights)."""
    module, inputs = rnn_scan()
    compare_jvp(module, inputs, "rnn_loss", prepare=False, wrt=list(range(len(inputs))))
    assert "mir.scan" in str(find_function(module, "rnn_loss_jvp"))


def test_jvp_of_the_scan_rnn_after_prepare():
    module, inputs = rnn_scan()
    compare_jvp(module, inputs, "rnn_loss")


def test_hvp_of_the_scan_rnn():
    """Forward over reverse through the scan: `(loss, grads, Hv)` against
    `jax.jvp(jax.grad(f))` of the `lax.scan` translation."""
    compare_hvp(*rnn_scan(), name="rnn_loss")


CUSTOM_FN_GRAPH = """
func.func @loss(%x: tensor<3x4xf32>, %w: tensor<4x4xf32> {rlx.param}) -> tensor<f32> {
  %h = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  %y = mir.custom_fn (%h) : (tensor<3x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%a: tensor<3x4xf32>):
    %s = mir.sin %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %p = mir.mul %s, %a : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    mir.yield %p : tensor<3x4xf32>
  } vjp {
  ^bb0(%a: tensor<3x4xf32>, %r: tensor<3x4xf32>, %d: tensor<3x4xf32>):
    mir.yield %d : tensor<3x4xf32>
  } jvp {
  ^bb0(%a: tensor<3x4xf32>, %r: tensor<3x4xf32>, %t: tensor<3x4xf32>):
    %c = mir.cos %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %u = mir.mul %t, %c : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %v = mir.add %u, %r : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    mir.yield %v : tensor<3x4xf32>
  }
  %z = mir.tanh %y : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %q = mir.mul %z, %h : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %l = mir.reduce sum %q axes = [0, 1] : (tensor<3x4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def test_jvp_through_a_custom_fn_uses_its_jvp_body_as_jax_does():
    """The jvp body (`t cos a + y`, not the derivative of `a sin a`) is the rule on both
    sides: rlx-jvp inlines it, JAX runs it as the op's `custom_jvp` (`custom_rule="jvp"`);
    the vjp body (identity) would give another tangent."""
    module = parse_module(CUSTOM_FN_GRAPH)
    inputs = [rand(3, 4), rand(4, 4, scale=0.5)]
    compare_jvp(module, inputs, "loss", prepare=False, wrt=[0, 1], custom_rule="jvp")
    text = CUSTOM_FN_GRAPH
    plain = text[: text.index("  } vjp {")] + text[text.index("  }\n  %z") :]  # no vjp or jvp body
    derived = _restricted(parse_module(plain), "loss", inputs, [0, 1])  # the forward body differentiated
    tangents = [rand(3, 4), rand(4, 4)]
    _, with_body = jax.jvp(_restricted(module, "loss", inputs, [0, 1], "jvp"), tuple(inputs), tuple(tangents))
    _, without = jax.jvp(derived, tuple(inputs), tuple(tangents))
    assert not np.allclose(with_body[0], without[0], rtol=0.05), "the jvp body must change the tangent"


SPELLED_OUT_FN_GRAPH = """
func.func @loss(%x: tensor<3x4xf32>, %w: tensor<4x4xf32> {rlx.param}) -> tensor<f32> {
  %h = mir.matmul %x, %w : (tensor<3x4xf32>, tensor<4x4xf32>) -> tensor<3x4xf32>
  %y = mir.custom_fn (%h) : (tensor<3x4xf32>) -> tensor<3x4xf32> {
  ^bb0(%a: tensor<3x4xf32>):
    %s = mir.sin %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %p = mir.mul %a, %s : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    mir.yield %p : tensor<3x4xf32>
  } vjp {
  ^bb0(%a: tensor<3x4xf32>, %r: tensor<3x4xf32>, %d: tensor<3x4xf32>):
    %s = mir.sin %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %c = mir.cos %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %ac = mir.mul %a, %c : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %k = mir.add %s, %ac : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %g = mir.mul %d, %k : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    mir.yield %g : tensor<3x4xf32>
  } jvp {
  ^bb0(%a: tensor<3x4xf32>, %r: tensor<3x4xf32>, %t: tensor<3x4xf32>):
    %s = mir.sin %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %c = mir.cos %a : (tensor<3x4xf32>) -> tensor<3x4xf32>
    %ac = mir.mul %a, %c : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %k = mir.add %s, %ac : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    %u = mir.mul %t, %k : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
    mir.yield %u : tensor<3x4xf32>
  }
  %z = mir.tanh %y : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %q = mir.mul %z, %h : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %l = mir.reduce sum %q axes = [0, 1] : (tensor<3x4xf32>) -> tensor<f32>
  func.return %l : tensor<f32>
}
"""


def test_hvp_through_a_custom_fn_with_both_bodies():
    """`a sin a` with its derivative spelled out in both bodies: rlx-hvp pulls back through
    the vjp body and pushes that forward (the jvp body gives y's tangent); JAX transposes
    the jvp body (`custom_rule="jvp"`) and differentiates it. (With a surrogate rule that is
    not the derivative the two differ by convention: JAX's second order differentiates the
    primal computed inside the rule, rlx-hvp takes the jvp body as y's tangent throughout.)"""
    module = parse_module(SPELLED_OUT_FN_GRAPH)
    compare_hvp(module, [rand(3, 4), rand(4, 4, scale=0.5)], "loss", custom_rule="jvp")
