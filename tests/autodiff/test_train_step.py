"""`rlx-train-step` against PyTorch's optimizers: 10 steps of AdamW / SGD in f64 on CPU."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from rlx_xdsl.autodiff.train_step import TrainStepPass
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline

MLP = """
func.func @loss(%x: tensor<5x3xf64> {rlx.name = "x"}, %w1: tensor<3x4xf64> {rlx.name = "w1", rlx.param},
                %y: tensor<5x2xf64> {rlx.name = "y"}, %b1: tensor<4xf64> {rlx.name = "b1", rlx.param},
                %w2: tensor<4x2xf64> {rlx.name = "w2", rlx.param}) -> tensor<f64> {
  %h0 = mir.matmul %x, %w1 : (tensor<5x3xf64>, tensor<3x4xf64>) -> tensor<5x4xf64>
  %h1 = mir.add %h0, %b1 : (tensor<5x4xf64>, tensor<4xf64>) -> tensor<5x4xf64>
  %h = mir.tanh %h1 : (tensor<5x4xf64>) -> tensor<5x4xf64>
  %out = mir.matmul %h, %w2 : (tensor<5x4xf64>, tensor<4x2xf64>) -> tensor<5x2xf64>
  %d = mir.sub %out, %y : (tensor<5x2xf64>, tensor<5x2xf64>) -> tensor<5x2xf64>
  %sq = mir.mul %d, %d : (tensor<5x2xf64>, tensor<5x2xf64>) -> tensor<5x2xf64>
  %loss = mir.reduce mean %sq axes = [0, 1] : (tensor<5x2xf64>) -> tensor<f64>
  func.return %loss : tensor<f64>
}
"""
PARAMS = (1, 3, 4)  # w1, b1, w2: the rlx.param arguments, in argument order


def inputs(rng):
    x, y = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    params = [rng.standard_normal((3, 4)), rng.standard_normal(4) * 0.1, rng.standard_normal((4, 2))]
    return x, y, params


def torch_steps(x, y, params, make_optimizer, steps):
    """The losses and final parameters of `steps` PyTorch optimizer steps (the oracle)."""
    tensors = [torch.tensor(p, requires_grad=True) for p in params]
    optimizer = make_optimizer(tensors)
    losses = []
    for _ in range(steps):
        optimizer.zero_grad()
        w1, b1, w2 = tensors
        loss = ((torch.tanh(torch.tensor(x) @ w1 + b1) @ w2 - torch.tensor(y)) ** 2).mean()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [t.detach().numpy() for t in tensors]


def our_steps(options, x, y, params, states_per_param, steps):
    module = parse_module(MLP)
    (pass_,) = parse_pipeline(f"rlx-train-step{{func=loss {options}}}", get_all_passes()).passes
    pass_.apply(make_context(), module)
    module.verify()
    states = [np.zeros_like(p) for p in params for _ in range(states_per_param)]
    losses = []
    for step in range(1, steps + 1):
        loss, *rest = run_function(module, "loss_train_step", [x, params[0], y, params[1], params[2], *states, np.float32(step)])
        params, states = rest[: len(params)], rest[len(params) :]
        losses.append(float(loss))
    return losses, params


@pytest.mark.parametrize(
    "options, states, make_optimizer",
    [
        (
            "optimizer=adamw lr=0.05 beta1=0.8 beta2=0.95 eps=1.0e-6 weight-decay=0.1",
            2,
            lambda ps: torch.optim.AdamW(ps, lr=0.05, betas=(0.8, 0.95), eps=1e-6, weight_decay=0.1),
        ),
        ("optimizer=adamw", 2, lambda ps: torch.optim.AdamW(ps)),  # PyTorch's defaults
        (
            "optimizer=sgd lr=0.1 momentum=0.9 weight-decay=0.01",
            1,
            lambda ps: torch.optim.SGD(ps, lr=0.1, momentum=0.9, weight_decay=0.01),
        ),
        ("optimizer=sgd lr=0.1", 0, lambda ps: torch.optim.SGD(ps, lr=0.1)),
    ],
    ids=["adamw", "adamw-defaults", "sgd-momentum", "sgd"],
)
def test_ten_steps_match_torch_optim(options, states, make_optimizer):
    x, y, params = inputs(np.random.default_rng(0))
    expected_losses, expected = torch_steps(x, y, params, make_optimizer, 10)
    losses, got = our_steps(options, x, y, params, states, 10)
    np.testing.assert_allclose(losses, expected_losses, rtol=1e-6)
    for ours, theirs in zip(got, expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-12)
    assert not np.allclose(got[0], params[0])  # the steps moved the parameters


def test_a_parameter_the_loss_does_not_use_is_decayed():
    """docs/deviations.md: the unused `u` gets a zero gradient, so AdamW only decays it,
    `u * (1 - lr * wd)` (PyTorch would skip it); its moments stay zero."""
    module = parse_module(
        """
func.func @f(%w: tensor<2xf64> {rlx.name = "w", rlx.param}, %u: tensor<2xf64> {rlx.name = "u", rlx.param}) -> tensor<f64> {
  %s = mir.mul %w, %w : (tensor<2xf64>, tensor<2xf64>) -> tensor<2xf64>
  %l = mir.reduce sum %s axes = [0] : (tensor<2xf64>) -> tensor<f64>
  func.return %l : tensor<f64>
}
"""
    )
    TrainStepPass(func="f", lr=0.1, weight_decay=0.5).apply(make_context(), module)
    w, u, zeros = np.array([1.0, -2.0]), np.array([3.0, 4.0]), np.zeros(2)
    _, new_w, new_u, *states = run_function(module, "f_train_step", [w, u, zeros, zeros, zeros, zeros, np.float32(1)])
    np.testing.assert_allclose(new_u, u * (1 - 0.1 * 0.5), rtol=1e-12)
    np.testing.assert_array_equal(states[2], zeros)  # u's first moment
    np.testing.assert_array_equal(states[3], zeros)  # u's second moment
    # w's first AdamW step moves each entry by lr against its gradient's sign (m / sqrt(v) = sign(g)).
    np.testing.assert_allclose(new_w, w * (1 - 0.05) - 0.1 * np.sign(2 * w), rtol=1e-6)
