"""Whole graphs batched by `rlx-vmap`, against `jax.vmap` of the JAX translation of MIR
(`conversions.mir_to_jax`, formulas written independently of the batching rules), and
per-example gradients (`rlx-grad` then `rlx-vmap`) against `torch.func.vmap(grad)`."""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="jax is in the test extra: pip install -e '.[test]'")
torch = pytest.importorskip("torch")

from rlx_xdsl.autodiff.grad import build_gradient
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.batching.vmap import build_vmap
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.conversions.mir_to_jax import jax_function
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.run import run_function
from rlx_xdsl.testing import model_graphs
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.vmap_check import check_vmap

N = 3
RNG = np.random.default_rng(7)
TOL = 1e-4


def rand(*shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def compare_with_jax_vmap(module, name: str, inputs: list[np.ndarray], batched: list[int]) -> None:
    """`@name_vmap` in the interpreter against `jax.vmap(@name)` (in_axes 0 on `batched`)."""
    reference = jax.vmap(jax_function(module, name), in_axes=[0 if i in batched else None for i in range(len(inputs))])
    expected = jax.jit(reference)(*inputs)
    build_vmap(module, name, [str(i) for i in batched], N)
    module.verify()
    got = run_function(module, f"{name}_vmap", inputs)
    assert len(got) == len(expected)
    for g, x in zip(got, expected, strict=True):
        assert g.shape == x.shape
        np.testing.assert_allclose(g, np.asarray(x), rtol=TOL, atol=TOL)


def mlp():
    params = [rand(6, 8, scale=0.4), rand(8), rand(8, 5, scale=0.4), rand(5)]
    return model_graphs.mlp(4, 6, 8, 5), params


def test_mlp_with_softmax_cross_entropy_per_example_batches():
    module, params = mlp()
    inputs = [rand(N, 4, 6), RNG.integers(0, 5, (N, 4)), *params]
    compare_with_jax_vmap(module, "loss", inputs, [0, 1])


def test_mlp_batched_over_its_weights_too():
    """A batched weight (an ensemble of models) makes the matmul a batched matmul."""
    module, params = mlp()
    inputs = [rand(N, 4, 6), RNG.integers(0, 5, (N, 4)), rand(N, 6, 8, scale=0.4), *params[1:]]
    compare_with_jax_vmap(module, "loss", inputs, [0, 1, 2])


def test_conv_net_with_pooling():
    inputs = [rand(N, 2, 1, 8, 8), RNG.integers(0, 10, (N, 2)), rand(4, 1, 3, 3), rand(1, 4, 1, 1),
              rand(6, 4, 3, 3, scale=0.3), rand(24, 10, scale=0.3)]  # fmt: skip
    compare_with_jax_vmap(model_graphs.conv_net_with_pooling(), "loss", inputs, [0, 1])


def test_one_llama_decoder_layer():
    """rms_norm, rope, grouped-query attention (narrow/concat), SwiGLU: the hidden state
    batched, the rope tables and weights shared."""
    dims = {"batch": 1, "seq": 4, "dim": 16, "n_heads": 2, "n_kv_heads": 1, "ffn": 24}
    module = build_llama(1, **dims)
    inputs = model_graphs.llama_inputs(module, rand(N, 1, 4, 16), dims, rand)
    compare_with_jax_vmap(module, "llama", inputs, [0])


@pytest.mark.parametrize("batched", [[0], [0, 1]], ids=["x", "x-and-w"])
def test_if_and_while_with_a_per_example_predicate(batched):
    """Each example takes its own branch (the sign of its sum) and its own loop."""
    b = GraphBuilder("f")
    x, w = b.input("x", [2, 4]), b.input("w", [4, 4])
    b.output(model_graphs.if_and_while(b, x, w))
    xs = rand(N, 2, 4)
    xs[1] = -np.abs(xs[1]) - 0.1  # one example of each sign
    xs[0] = np.abs(xs[0]) + 0.1
    w = rand(N, 4, 4, scale=0.5) if 1 in batched else rand(4, 4, scale=0.5)
    compare_with_jax_vmap(b.module(), "f", [xs, w], batched)


def scan_rnn():
    sb = GraphBuilder("rnn")
    h0, w, xs = sb.input("h0", [1, 3]), sb.param("w", [3, 3]), sb.input("xs", [5, 1, 3])
    final = sb.scan(h0, lambda rb, h, w, x: rb.tanh(rb.add(rb.matmul(h, w), x)), 5, bcasts=[w], xs=[xs])
    sb.output(final)
    return sb.module()


@pytest.mark.parametrize("batched", [[0, 2], [0, 1, 2], [1]], ids=["sequences", "and-weights", "weights"])
def test_scan_rnn_against_jax_vmap_of_lax_scan(batched):
    """A tanh RNN over a sequence (`mir.scan`, `lax.scan` in the JAX translation), batched
    over sequences and initial states, over the shared weight too, or over the weight alone."""
    shapes = [(1, 3), (3, 3), (5, 1, 3)]
    inputs = [rand(*((N,) if i in batched else ()), *shape, scale=0.5) for i, shape in enumerate(shapes)]
    compare_with_jax_vmap(scan_rnn(), "rnn", inputs, batched)


def test_scan_rnn_against_the_stacked_examples():
    """The same RNN against its definition, the per-example runs stacked."""
    examples = [[rand(1, 3), rand(3, 3, scale=0.5), rand(5, 1, 3)] for _ in range(N)]
    check_vmap(scan_rnn(), "rnn", examples, [0, 2], rtol=TOL, atol=TOL)


def test_the_rnn_scan_example_against_jax_vmap():
    """`examples/rnn_scan.mlir` (weights as scan bcasts, a loss on the last state),
    batched over initial states, sequences and targets."""
    from pathlib import Path

    from rlx_xdsl.context import parse_module

    module = parse_module((Path(__file__).parents[2] / "examples/rnn_scan.mlir").read_text())
    shapes = [t.get_shape() for t in find_function(module, "rnn_loss").function_type.inputs]
    inputs = [rand(*((N,) if i < 3 else ()), *shape, scale=0.5) for i, shape in enumerate(shapes)]
    compare_with_jax_vmap(module, "rnn_loss", inputs, [0, 1, 2])


def test_per_example_gradients_against_torch_func():
    """`rlx-grad` then `rlx-vmap` over (x, labels): one gradient per example, as
    `torch.func.vmap(torch.func.grad(loss), in_dims=(0, 0, None, ...))`."""
    module, params = mlp()
    x, labels = rand(N, 4, 6), RNG.integers(0, 5, (N, 4))
    prepare_for_ad(module)
    build_gradient(module, "loss")
    build_vmap(module, "loss_grad", ["x", "labels"], N)
    module.verify()
    loss, *grads = run_function(module, "loss_grad_vmap", [x, labels, *params, np.ones((), np.float32)])

    def torch_loss(w1, b1, w2, b2, x, labels):
        hidden = torch.relu(x @ w1 + b1)
        return torch.nn.functional.cross_entropy(hidden @ w2 + b2, labels)

    per_example = torch.func.vmap(torch.func.grad(torch_loss, argnums=(0, 1, 2, 3)), in_dims=(None,) * 4 + (0, 0))
    expected = per_example(*map(torch.from_numpy, params), torch.from_numpy(x), torch.from_numpy(labels))
    assert loss.shape == (N,)
    for got, want in zip(grads, expected, strict=True):
        assert got.shape == tuple(want.shape) and got.shape[0] == N
        np.testing.assert_allclose(got, want.numpy(), rtol=TOL, atol=TOL)
    assert not np.allclose(grads[0][0], grads[0][1]), "the examples' gradients differ"
