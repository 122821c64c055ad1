"""The hand-written PyTorch and JAX LLaMA models compute `build_llama`'s function: each is
checked against the interpreter running the MIR graph (forward with GQA and logits, and the
loss of `build_llama_loss`), and their gradients against each other."""

import numpy as np
import pytest

from rlx_xdsl.ir.graph import graph_args
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.llama_reference import (
    LlamaConfig,
    init_inputs,
    init_params,
    jax_llama,
    jax_loss,
    labels,
    torch_llama,
    torch_loss,
)

torch = pytest.importorskip("torch")
jax = pytest.importorskip("jax")
jnp = jax.numpy

CONFIG = LlamaConfig(layers=2, batch=2, seq=5, dim=16, n_heads=4, n_kv_heads=2, ffn=24, vocab=11)


@pytest.fixture(scope="module")
def case():
    params, inputs = init_params(CONFIG, seed=3), init_inputs(CONFIG, seed=4)
    f = CONFIG.module().ops.first
    ordered = [inputs[a.name] if not a.is_param else params[a.name] for a in graph_args(f)]
    return params, inputs, ordered


def as_torch(arrays):
    return {k: torch.from_numpy(np.asarray(v)) for k, v in arrays.items()}


def test_the_models_match_the_interpreter_on_the_graph(case):
    params, inputs, ordered = case
    (want,) = run_function(CONFIG.module(), "llama", ordered)
    got_torch = torch_llama(as_torch(params), **as_torch(inputs), config=CONFIG).numpy()
    got_jax = np.asarray(jax.jit(lambda p, i: jax_llama(p, **i, config=CONFIG))(params, inputs))
    assert want.shape == (2, 5, 11)
    np.testing.assert_allclose(got_torch, want, rtol=2e-5, atol=2e-5)
    np.testing.assert_allclose(got_jax, want, rtol=2e-5, atol=2e-5)


def test_the_models_fail_when_the_kv_heads_are_grouped_the_other_way(case):
    """The check can fail: tiling kv heads (j -> heads j, j+Hkv, ...) instead of repeating
    each one in place changes the output."""
    params, inputs, ordered = case
    (want,) = run_function(CONFIG.module(), "llama", ordered)
    kv = CONFIG.n_kv_heads * CONFIG.head_dim
    hd = CONFIG.head_dim
    swapped = dict(params)
    for i in range(CONFIG.layers):
        for w in ("wk", "wv"):  # swap the two kv heads' columns: a different grouping of the same weights
            m = params[f"layers.{i}.{w}"].reshape(CONFIG.dim, CONFIG.n_kv_heads, hd)
            swapped[f"layers.{i}.{w}"] = m[:, ::-1].reshape(CONFIG.dim, kv)
    got = torch_llama(as_torch(swapped), **as_torch(inputs), config=CONFIG).numpy()
    assert np.abs(got - want).max() > 1e-3


def test_the_losses_match_the_interpreter_and_their_gradients_agree(case):
    params, inputs, _ = case
    module = CONFIG.module(loss=True)
    f = module.ops.first
    ordered = [inputs[a.name] if not a.is_param else params[a.name] for a in graph_args(f)]
    (want,) = run_function(module, "llama", ordered)
    target = labels(CONFIG)

    tp = {k: v.requires_grad_() for k, v in as_torch(params).items()}
    loss_t = torch_loss(tp, **as_torch(inputs), target=torch.from_numpy(target), config=CONFIG)
    loss_t.backward()
    loss_j, grads_j = jax.value_and_grad(jax_loss)(params, **inputs, target=jnp.asarray(target), config=CONFIG)
    np.testing.assert_allclose(float(loss_t.detach()), want, rtol=1e-5)
    np.testing.assert_allclose(float(loss_j), want, rtol=1e-5)
    for name in params:
        np.testing.assert_allclose(tp[name].grad.numpy(), np.asarray(grads_j[name]), rtol=1e-3, atol=1e-5)
