"""rlx-grad through fake quantisation against PyTorch's fake-quantize autograd, and
through dequant_matmul against central differences (in x).

The forward ops are piecewise constant, so their rules are estimators (STE, LSQ), not
derivatives: central differences cannot check them. PyTorch's
`fake_quantize_per_{tensor,channel}_affine` and `_fake_quantize_learnable_*` define the
clipped straight-through and LSQ gradients; the smooth surrogates (tanh, hard_tanh) are
PyTorch's autograd of `r * tanh(x / r)` and `r * hardtanh(x / r)`.
"""

import numpy as np
import pytest
import torch

from rlx_xdsl.autodiff.grad import Mode, build_gradient
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.diagnostics import OpError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.gradcheck import check_gradients

RNG = np.random.default_rng(7)
X = (RNG.standard_normal((4, 6)) * 2).astype(np.float32)
DY = RNG.standard_normal((4, 6)).astype(np.float32)


def rlx_gradients(op: str, inputs, wrt, **props) -> list[np.ndarray]:
    """`@f = mir.<op>(inputs)` differentiated by rlx-grad, with cotangent DY."""
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape) for i, x in enumerate(inputs)]
    b.output(getattr(b.mir, op)(*args, **props))
    module = b.module()
    build_gradient(module, "f", [str(i) for i in wrt], Mode("strict"))
    module.verify()
    return run_function(module, "f_grad", [*inputs, DY])[1:]


def torch_grad(fn, x):
    xt = torch.tensor(x, requires_grad=True)
    fn(xt).backward(torch.tensor(DY))
    return xt.grad.numpy()


@pytest.mark.parametrize("axis", [None, 1])
def test_clipped_identity_is_pytorchs_fake_quantize_gradient(axis):
    # A fixed range that clips some elements, so the mask is not all ones.
    state = np.float32([1.5]) if axis is None else np.float32([1.5, 0.5, 3.0, 1.0, 2.0, 0.25])
    (dx,) = rlx_gradients("fake_quantize", [X, state], [0], bits=4, axis=axis, ste="clipped_identity",
                          scale_mode="fixed")  # fmt: skip
    step = state / np.float32(7)
    if axis is None:
        expected = torch_grad(lambda x: torch.fake_quantize_per_tensor_affine(x, float(step[0]), 0, -8, 7), X)
    else:
        zeros = torch.zeros(6, dtype=torch.int32)
        expected = torch_grad(
            lambda x: torch.fake_quantize_per_channel_affine(x, torch.tensor(step), zeros, 1, -8, 7), X
        )
    assert 0 < np.count_nonzero(dx) < dx.size
    np.testing.assert_array_equal(dx, expected)


@pytest.mark.parametrize(("ste", "surrogate"), [("tanh", torch.tanh), ("hard_tanh", torch.nn.functional.hardtanh)])
def test_smooth_surrogates_are_the_derivatives_of_their_functions(ste, surrogate):
    state = np.float32([2.5])
    (dx,) = rlx_gradients("fake_quantize", [X, state], [0], bits=3, ste=ste, scale_mode="fixed")
    expected = torch_grad(lambda x: 2.5 * surrogate(x / 2.5), X)
    np.testing.assert_allclose(dx, expected, rtol=1e-6, atol=1e-7)


def test_identity_passes_the_cotangent_and_emits_no_backward_op():
    (dx,) = rlx_gradients("fake_quantize", [X], [0], bits=2)
    np.testing.assert_array_equal(dx, DY)


@pytest.mark.parametrize("axis", [None, 0])
def test_lsq_gradients_are_pytorchs_learnable_fake_quantize(axis):
    scale = np.float32([0.3]) if axis is None else np.float32([0.3, 0.2, 0.5, 1.0])
    dx, ds = rlx_gradients("fake_quantize_lsq", [X, scale], [0, 1], bits=4, axis=axis)
    per_step = X.size if axis is None else X.size // 4
    factor = float(1 / np.sqrt(per_step * 7))  # LSQ's gradient scale
    xt, st = torch.tensor(X, requires_grad=True), torch.tensor(scale, requires_grad=True)
    if axis is None:
        y = torch._fake_quantize_learnable_per_tensor_affine(xt, st, torch.zeros(1), -8, 7, factor)
    else:
        y = torch._fake_quantize_learnable_per_channel_affine(xt, st, torch.zeros(4), 0, -8, 7, factor)
    y.backward(torch.tensor(DY))
    np.testing.assert_array_equal(dx, xt.grad.numpy())
    np.testing.assert_allclose(ds, st.grad.numpy(), rtol=1e-5)


@pytest.mark.parametrize(("scheme", "w_q", "scale"), [
    ("int8_block", RNG.integers(-128, 128, (4, 3)).astype(np.int8), RNG.standard_normal((2, 3))),
    ("int4_block", RNG.integers(0, 256, (2, 3)).astype(np.uint8), RNG.standard_normal((2, 3))),
    ("fp8_e4m3", RNG.integers(0, 0x70, (4, 3)).astype(np.uint8), RNG.standard_normal(3)),
])  # fmt: skip
def test_dequant_matmul_x_gradient_matches_central_differences(scheme, w_q, scale):
    """Linear in x, so the straight-through x gradient is the derivative; scales and zero
    points get none (RLX's rule), so only x is checked."""
    b = GraphBuilder("f")
    x = RNG.standard_normal((2, 4))
    block = {"block_size": 2} if scheme != "fp8_e4m3" else {}
    args = [b.input("x", [2, 4], "f64"), b.input("w", w_q.shape, "i8" if w_q.dtype == np.int8 else "ui8"),
            b.input("s", scale.shape, "f64"), b.input("z", [1], "f64")]  # fmt: skip
    b.output(b.mir.dequant_matmul(*args, scheme=scheme, **block))
    check_gradients(b.module(), "f", [x, w_q, scale, np.zeros(1)], [0])


def test_dequant_matmul_needs_a_static_k_for_the_x_gradient():
    b = GraphBuilder("f")
    args = [b.input("x", [2, DYNAMIC]), b.input("w", [4, 3], "i8"), b.input("s", [2, 3]), b.input("z", [1])]
    b.output(b.mir.dequant_matmul(*args, scheme="int8_block", block_size=2))
    module = b.module()
    with pytest.raises(OpError, match="K must be static to decode the weights"):
        build_gradient(module, "f", ["0"], Mode("strict"))


def test_the_lsq_scale_gradients_own_gradient_needs_the_dims_sharing_a_step_static():
    """LSQ's gradient scale `1 / sqrt(N qmax)` counts them (the rule is checked by central
    differences in tests/autodiff/test_rules.py)."""
    b = GraphBuilder("f")
    x, s, dy = b.input("x", [DYNAMIC, 3]), b.input("s", [3]), b.input("dy", [DYNAMIC, 3])
    b.output(b.mir.fake_quantize_lsq_backward_scale(x, s, dy, bits=4, axis=1))
    with pytest.raises(OpError, match="'mir.fake_quantize_lsq_backward_scale': LSQ's gradient scale needs"):
        build_gradient(b.module(), "f", ["0"], Mode("strict"))


def test_the_tanh_surrogates_second_derivative_is_a_located_error():
    """A deferred gradient raising `Unsupported` is reported at the op, as a rule's own."""
    b = GraphBuilder("f")
    x, dy = b.input("x", [4]), b.input("dy", [4])
    b.output(b.mir.fake_quantize_backward(x, dy, bits=4, ste="tanh"))
    with pytest.raises(OpError, match="'rlx-grad' cannot differentiate 'mir.fake_quantize_backward': the second"):
        build_gradient(b.module(), "f", ["0"], Mode("strict"))


@pytest.mark.parametrize("scheme", ["gguf_q8_0", "gguf_q4_0"])
def test_dequant_matmul_x_gradient_in_the_two_operand_gguf_form(scheme):
    """RLX's rule reads operands 2 and 3, which the GGUF form does not have."""
    size = {"gguf_q8_0": 34, "gguf_q4_0": 18}[scheme]
    blocks = RNG.integers(0, 256, (2, size)).astype(np.uint8)
    blocks[:, :2] = np.float16([0.25, -0.5]).view(np.uint8).reshape(2, 2)
    b = GraphBuilder("f")
    b.output(b.mir.dequant_matmul(b.input("x", [2, 32], "f64"), b.input("p", [2 * size], "ui8"), scheme=scheme))
    check_gradients(b.module(), "f", [RNG.standard_normal((2, 32)), blocks.reshape(-1)], [0])


def jax_lsq(x, s, bits: int, axis):
    """LSQ written with the gradient-scale trick (Esser et al. 2020): the step
    `s g + stop_gradient(s - s g)`, rounding half to even straight through inside the grid
    (PyTorch's learnable fake-quantize mask: the rounded value in `[qmin, qmax]`)."""
    import jax
    import jax.numpy as jnp

    qmin, qmax = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if axis is not None:
        s = s.reshape([-1 if a == axis else 1 for a in range(x.ndim)])
    g = 1 / np.sqrt(x.size / s.size * qmax)
    s = s * g + jax.lax.stop_gradient(s - s * g)
    v = x / s
    r = jnp.round(v)
    inside = (r >= qmin) & (r <= qmax)
    q = jnp.where(inside, v + jax.lax.stop_gradient(r - v), jnp.clip(r, qmin, qmax))
    return q * s


@pytest.mark.parametrize("axis", [None, 1])
def test_lsq_hessian_vector_products_are_jaxs_of_the_gradient_scale_trick(axis):
    """`rlx-hvp` through `fake_quantize_lsq` (3 bits, 24 elements) against
    `jax.jvp(jax.grad(...))` of LSQ written with the gradient-scale trick: the step's
    second derivative carries `g²` (the rule had `g` once)."""
    import jax
    import jax.numpy as jnp

    from rlx_xdsl.autodiff.hvp import build_hvp

    jax.config.update("jax_enable_x64", True)
    rng = np.random.default_rng(3)
    channels = 1 if axis is None else 6
    b = GraphBuilder("f")
    x, s = b.param("x", [4, 6], "f64"), b.param("s", [channels], "f64")
    y = b.mir.fake_quantize_lsq(x, s, bits=3, axis=axis)
    b.output(b.mir.reduce(b.mir.mul(y, b.mir.sin(y)), kind="sum", axes=[0, 1]))
    module = b.module()
    inputs = [rng.standard_normal((4, 6)), rng.uniform(0.3, 0.6, channels)]
    vs = [rng.standard_normal((4, 6)), rng.standard_normal(channels)]

    def loss(xv, sv):
        yv = jax_lsq(xv, sv, 3, axis)
        return jnp.sum(yv * jnp.sin(yv))

    want_grads, want_hv = jax.jvp(jax.grad(loss, argnums=(0, 1)), inputs, vs)
    build_hvp(module, "f")
    module.verify()
    _, *grads, hv_x, hv_s = run_function(module, "f_hvp", [*inputs, *vs])
    for got, want in zip([*grads, hv_x, hv_s], [*want_grads, *want_hv], strict=True):
        np.testing.assert_allclose(got, np.asarray(want), rtol=1e-9, atol=1e-9)
    assert np.abs(np.asarray(want_hv[1])).max() > 1e-2


@pytest.mark.parametrize("axis", [None, 1])
def test_lsq_scale_gradients_own_gradient_is_linear_in_dy_only(axis):
    """`fake_quantize_lsq_backward_scale` is linear in dy (checked by central differences);
    x and the scale get zeros: the rounding passes straight through, as in the first
    derivative, so the rounding error is constant."""
    channels = 1 if axis is None else 6

    def module():
        b = GraphBuilder("f")
        x, s, dy = b.input("x", [4, 6], "f64"), b.input("s", [channels], "f64"), b.input("dy", [4, 6], "f64")
        b.output(b.mir.fake_quantize_lsq_backward_scale(x, s, dy, bits=3, axis=axis))
        return b.module()

    rng = np.random.default_rng(1)
    inputs = [rng.standard_normal((4, 6)), rng.uniform(0.3, 0.6, channels), rng.standard_normal((4, 6))]
    check_gradients(module(), "f", inputs, [2])
    straight = module()
    build_gradient(straight, "f", ["0", "1"], Mode("training"))
    _, dx, ds = run_function(straight, "f_grad", [*inputs, rng.standard_normal(channels)])
    assert not dx.any() and not ds.any()
