"""`rlx-jvp` and `rlx-hvp` on whole graphs, against `jax.jvp` and `jax.jvp(jax.grad(f))`.

JAX evaluates `@f` through `conversions.mir_to_jax` (formulas written from the
ops' semantics, independent of the kernels and of both rule registries). The
graphs run in f32 on both sides; results agree to 2e-3 (JAX's `check_grads`
tolerance for f32). Graphs with a scan, whose JAX translation may be missing,
are checked against central differences of the interpreter in f64 instead.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")
import jax.numpy as jnp  # noqa: E402

from rlx_xdsl.autodiff.hvp import build_hvp  # noqa: E402
from rlx_xdsl.autodiff.jvp import build_jvp  # noqa: E402
from rlx_xdsl.autodiff.prepare import prepare_for_ad  # noqa: E402
from rlx_xdsl.builder import GraphBuilder  # noqa: E402
from rlx_xdsl.graph import graph_args  # noqa: E402
from rlx_xdsl.interpreters import find_function, run_function  # noqa: E402
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


def _restricted(module, name, inputs, wrt):
    f = jax_function(module, name)

    def g(*chosen):
        args = list(map(jnp.asarray, inputs))
        for index, value in zip(wrt, chosen):
            args[index] = value
        return f(*args)

    return g


def compare_jvp(module, inputs, name, prepare=True):
    """Every result's tangent along random tangents of the rlx.param arguments: rlx-jvp's and jax.jvp's."""
    wrt = _params(module, name)
    tangents = [rand(*np.shape(inputs[i])) for i in wrt]
    g = _restricted(module, name, inputs, wrt)
    pushed = jax.jit(lambda p, t: jax.jvp(lambda *c: tuple(g(*c)), p, t))  # one compile, not one per op
    want_out, want_tan = pushed([jnp.asarray(inputs[i]) for i in wrt], tangents)
    if prepare:
        prepare_for_ad(module)
    build_jvp(module, name)
    module.verify()
    outputs = run_function(module, f"{name}_jvp", [*inputs, *tangents])
    count = len(outputs) // 2
    for got, want in zip(outputs[:count], want_out, strict=True):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    for got, want in zip(outputs[count:], want_tan, strict=True):
        np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    assert max(np.abs(np.asarray(t)).max() for t in want_tan) > 1e-3, "a vanishing tangent would prove nothing"


def compare_hvp(module, inputs, name, wrt=None):
    """rlx-hvp's `(loss, grads, Hv)` against `jax.grad` and `jax.jvp(jax.grad(f))`."""
    wrt = _params(module, name) if wrt is None else wrt
    vs = [rand(*np.shape(inputs[i])) for i in wrt]
    g = _restricted(module, name, inputs, wrt)

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
