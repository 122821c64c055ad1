"""`rlx-hvp` through the backward kernels' own JVP rules, on small f64 training graphs.

Each graph's gradient function holds backward kernels (activation, norm, attention,
rope, conv, pool and cross-entropy gradients, a scan's reverse sweep); `@f_hvp` must keep them (their JVP
rules push the tangents, no decomposition) and its `Hv` must match the central
difference of the gradient, `(∇f(w + eps v) - ∇f(w - eps v)) / 2 eps`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.autodiff.hvp import build_hvp
from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.structured import ScanBackwardOp
from rlx_xdsl.run import run_function

F64 = "f64"


def mlp(b: GraphBuilder) -> None:
    """gelu MLP, layer norm, rms norm and a labelled cross-entropy (one row ignored)."""
    x = b.input("x", [4, 6], F64)
    labels = b.input("labels", [4], "i64")
    w1, w2 = b.param("w1", [6, 5], F64), b.param("w2", [5, 3], F64)
    gamma, beta = b.param("gamma", [5], F64), b.param("beta", [5], F64)
    h = b.mir.gelu(b.mir.matmul(x, w1))
    h = b.mir.layer_norm(h, gamma, beta, axis=-1, eps=1e-5)
    h = b.mir.rms_norm(b.mir.silu(h), gamma, beta, axis=-1, eps=1e-6)
    loss = b.mir.softmax_cross_entropy_with_logits(b.mir.matmul(h, w2), labels, ignore_index=2)
    b.output(b.mir.reduce(loss, kind="mean", axes=[0]))


def attention(b: GraphBuilder) -> None:
    """Rotary attention with grouped KV heads and a causal mask, squared-error loss."""
    q = b.param("q", [1, 2, 3, 4], F64)
    k, v = b.param("k", [1, 1, 3, 4], F64), b.param("v", [1, 1, 3, 4], F64)
    cos, sin = b.input("cos", [3, 2], F64), b.input("sin", [3, 2], F64)
    q = b.mir.rope(q, cos, sin, head_dim=4, n_rot=4)
    y = b.mir.attention(q, k, v, num_heads=2, head_dim=4, mask_kind="causal", attn_logit_softcap=5.0)
    b.output(b.mir.reduce(b.mir.mul(y, b.mir.tanh(y)), kind="sum", axes=[0, 1, 2, 3]))


def conv(b: GraphBuilder) -> None:
    """conv, group norm, relu, max pool, a sum of squares."""
    x = b.input("x", [2, 2, 5, 5], F64)
    w = b.param("w", [4, 2, 3, 3], F64)
    gamma, beta = b.param("gamma", [4], F64), b.param("beta", [4], F64)
    y = b.mir.conv(x, w, kernel_size=[3, 3], stride=[1, 1], padding=[1, 1])
    y = b.mir.group_norm(y, gamma, beta, num_groups=2, eps=1e-5)
    y = b.mir.pool(b.mir.relu(y), kind="max", kernel_size=[2, 2], stride=[2, 2])
    b.output(b.mir.reduce(b.mir.mul(y, y), kind="sum", axes=[0, 1, 2, 3]))


def vision(b: GraphBuilder) -> None:
    """conv_transpose_2d, layer_norm_2d, resize_nearest_2x, then a grouped matmul over the pixels."""
    x = b.input("x", [1, 2, 3, 3], F64)
    experts = b.input("experts", [20], "i64")
    w = b.param("w", [2, 3, 2, 2], F64)
    gamma, beta = b.param("gamma", [3], F64), b.param("beta", [3], F64)
    expert_w = b.param("expert_w", [2, 3, 2], F64)
    y = b.mir.conv_transpose_2d(x, w, kernel_size=[2, 2], stride=[1, 1], padding=[0, 0], output_padding=[0, 0],
                                dilation=[1, 1], groups=1)
    y = b.mir.resize_nearest_2x(b.mir.layer_norm_2d(y, gamma, beta, eps=1e-5))  # [1, 3, 8, 8]
    pixels = b.mir.reshape(b.mir.transpose(b.mir.narrow(y, axis=2, start=0, len=2), perm=[0, 2, 3, 1]),
                           new_shape=[16, 3])
    out = b.mir.grouped_matmul(b.mir.concat(pixels, b.mir.narrow(pixels, axis=0, start=0, len=4), axis=0),
                               expert_w, experts)
    b.output(b.mir.reduce(b.mir.mul(out, b.mir.sin(out)), kind="sum", axes=[0, 1]))


def rnn(num_checkpoints: int | None = None, save_trajectory: bool = False) -> Callable[[GraphBuilder], None]:
    """`h = tanh(h @ w + x_t)` over 4 steps (w a bcast), loss = sum of `h sin(h)` over the
    final carry or the trajectory; checkpoints make the sweep recompute between them."""

    def build(b: GraphBuilder) -> None:
        h0, w, xs = b.param("h0", [2, 3], F64), b.param("w", [3, 3], F64), b.param("xs", [4, 2, 3], F64)

        def body(rb, h, weight, x_t):
            return rb.tanh(rb.add(rb.matmul(h, weight), x_t))

        h = b.scan(h0, body, 4, bcasts=[w], xs=[xs], num_checkpoints=num_checkpoints, save_trajectory=save_trajectory)
        rank = len(h.type.get_shape())
        b.output(b.mir.reduce(b.mir.mul(h, b.mir.sin(h)), kind="sum", axes=list(range(rank))))

    return build


GRAPHS: dict[str, tuple[Callable[[GraphBuilder], None], set[str]]] = {
    "mlp": (mlp, {"mir.activation_backward", "mir.layer_norm_backward_input", "mir.rms_norm_backward_input",
                  "mir.softmax_cross_entropy_backward"}),
    "attention": (attention, {"mir.attention_backward", "mir.rope_backward"}),
    "conv": (conv, {"mir.conv_backward_weight", "mir.group_norm_backward_input", "mir.pool_backward",
                    "mir.relu_backward"}),
    "vision": (vision, {"mir.layer_norm_backward_input", "mir.conv_backward_weight", "mir.grouped_matmul"}),
    "scan": (rnn(), {"mir.scan_backward"}),
    "scan_checkpointed_trajectory": (rnn(num_checkpoints=2, save_trajectory=True), {"mir.scan_backward"}),
}  # fmt: skip


def inputs_for(function, rng: np.random.Generator) -> list[np.ndarray]:
    arrays = []
    for t in function.function_type.inputs:
        shape = tuple(t.get_shape())
        if str(t.element_type) == "i64":
            ids = np.array([0, 2, 1, 2]) if shape == (4,) else np.arange(shape[0]) % 2  # SCE labels, expert ids
            arrays.append(ids.astype(np.int64))
        else:
            arrays.append(rng.standard_normal(shape))
    return arrays


@pytest.mark.parametrize("name", GRAPHS)
def test_hvp_through_backward_kernels(name: str) -> None:
    build, kernels = GRAPHS[name]
    b = GraphBuilder("f")
    build(b)
    module = b.module()
    prepare_for_ad(module)
    function = module.body.block.first_op
    params = [i for i, a in enumerate(function.arg_attrs.data) if "rlx.param" in a.data]
    build_gradient(module, "f", [str(i) for i in params], Mode.STRICT)
    hvp = build_hvp(module, "f")
    module.verify()
    assert kernels <= {op.name for op in hvp.walk()}, "the HVP keeps the backward kernels"
    if "checkpointed" in name:  # the sweep recomputes (carry, tangent carry) between checkpoints
        assert all(op.forward is not None for op in hvp.walk() if isinstance(op, ScanBackwardOp))

    rng = np.random.default_rng(3)
    inputs = inputs_for(function, rng)
    vs = [rng.standard_normal(inputs[i].shape) for i in params]
    results = run_function(module, "f_hvp", [*inputs, *vs])
    hv = results[1 + len(params) :]

    def gradient(step: float) -> list[np.ndarray]:
        moved = list(inputs)
        for i, v in zip(params, vs):
            moved[i] = inputs[i] + step * v
        return run_function(module, "f_grad", [*moved, np.ones(())])[1:]

    eps = 1e-6
    for product, up, down in zip(hv, gradient(eps), gradient(-eps)):
        np.testing.assert_allclose(product, (up - down) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_hvp_through_the_signal_kernels_matches_jax() -> None:
    """A log-mel front end on complex values (f32: complex<f32> has no f64 twin):
    `sum(log_mel(|fft(x)|², F)²)`. Its gradient holds `complex_norm_sq_backward` and
    `log_mel_backward`; `Hv` is checked against `jax.jvp(jax.grad(f))` of the graph's
    JAX translation (JAX's complex convention, f32 tolerance)."""
    jax = pytest.importorskip("jax")
    import jax.numpy as jnp

    from rlx_xdsl.testing.jax_oracle import jax_function

    b = GraphBuilder("f")
    x, filters = b.param("x", [3, 8]), b.param("filters", [8, 4])
    spectrum = b.mir.fft(b.mir.cast(x, "complex<f32>"), norm="ortho")
    mel = b.mir.log_mel(b.mir.complex_norm_sq(spectrum), filters, eps=1e-3)
    b.output(b.mir.reduce(b.mir.mul(mel, mel), kind="sum", axes=[0, 1]))
    module = b.module()
    rng = np.random.default_rng(5)
    inputs = [rng.standard_normal((3, 8)).astype(np.float32), rng.random((8, 4)).astype(np.float32)]
    vs = [rng.standard_normal(a.shape).astype(np.float32) for a in inputs]
    f = jax_function(module, "f")
    gradient = jax.grad(lambda *a: f(*a)[0], argnums=(0, 1))
    _, want = jax.jvp(gradient, [jnp.asarray(a) for a in inputs], vs)

    hvp = build_hvp(module, "f")
    module.verify()
    assert {"mir.complex_norm_sq_backward", "mir.log_mel_backward"} <= {op.name for op in hvp.walk()}
    got = run_function(module, "f_hvp", [*inputs, *vs])[3:]
    for product, expected in zip(got, want, strict=True):
        np.testing.assert_allclose(product, np.asarray(expected), rtol=2e-3, atol=2e-3)
    assert max(np.abs(np.asarray(h)).max() for h in want) > 1e-2


def test_hvp_of_a_dynamic_result_seeds_ones_after_the_loss() -> None:
    """A `?`-shaped result: the ones seeding the gradient take the loss's run-time shape, so
    they are built after the loss (they used the seed before it was defined). `Hv` of
    `sum(tanh(x))` is `-2 tanh(x) (1 - tanh(x)²) v`."""
    from rlx_xdsl.context import parse_module

    module = parse_module(
        "func.func @f(%x: tensor<?x4xf32>) -> tensor<?x4xf32> {\n"
        "  %0 = mir.tanh %x : (tensor<?x4xf32>) -> tensor<?x4xf32>\n"
        "  func.return %0 : tensor<?x4xf32>\n"
        "}\n"
    )
    build_hvp(module, "f", ["0"])
    module.verify()
    rng = np.random.default_rng(0)
    x, v = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 4)).astype(np.float32)
    loss, grad, hv = run_function(module, "f_hvp", [x, v])
    t = np.tanh(x.astype(np.float64))
    np.testing.assert_allclose(grad, 1 - t**2, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hv, -2 * t * (1 - t**2) * v, rtol=1e-5, atol=1e-6)
