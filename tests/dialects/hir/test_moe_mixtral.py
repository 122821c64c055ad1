"""`hir.moe_swiglu` against Hugging Face's `MixtralSparseMoeBlock` on random weights: the
forward in the interpreter, and the gradient of its `rlx-lower-hir` lowering through
`rlx-prepare-ad,rlx-grad` against torch autograd through the same block.

Layouts: Mixtral's router is `weight[E, D]` (`F.linear`, so `x @ weight.T`); each expert's
`gate_up_proj[E, 2F, D]` holds the gate rows then the up rows, and `down_proj[E, D, F]`;
the block renormalises its top-k probabilities (`normalize_top_k`)."""

import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl.autodiff.grad import GradPass
from rlx_xdsl.autodiff.prepare import PrepareAdPass
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass
from rlx_xdsl.run import run_function

torch = pytest.importorskip("torch")
mixtral = pytest.importorskip("transformers.models.mixtral.modeling_mixtral")

DIM, FFN, EXPERTS, TOP_K = 8, 12, 4, 2


@pytest.fixture(scope="module")
def block():
    from transformers import MixtralConfig

    config = MixtralConfig(
        hidden_size=DIM, intermediate_size=FFN, num_local_experts=EXPERTS, num_experts_per_tok=TOP_K
    )
    torch.manual_seed(23)
    moe = mixtral.MixtralSparseMoeBlock(config).eval()
    with torch.no_grad():  # the block's parameters start uninitialised (`torch.empty`)
        for p in moe.parameters():
            p.normal_(0.0, 0.5)
    return moe


def hir_weights(moe) -> list[np.ndarray]:
    """Mixtral's parameters in `hir.moe_swiglu`'s operand layouts."""
    gate_up = moe.experts.gate_up_proj.detach().numpy()
    return [
        moe.gate.weight.detach().numpy().T.copy(),  # router [D, E]
        gate_up[:, :FFN, :].transpose(0, 2, 1).copy(),  # w_gate [E, D, F]
        gate_up[:, FFN:, :].transpose(0, 2, 1).copy(),  # w_up [E, D, F]
        moe.experts.down_proj.detach().numpy().transpose(0, 2, 1).copy(),  # w_down [E, F, D]
    ]


def moe_module(x_shape, lower: bool):
    b = GraphBuilder("f")
    x = b.input("x", list(x_shape))
    shapes = [[DIM, EXPERTS], [EXPERTS, DIM, FFN], [EXPERTS, DIM, FFN], [EXPERTS, FFN, DIM]]
    ws = [b.input(n, s) for n, s in zip(("router", "gate", "up", "down"), shapes, strict=True)]
    b.output(b.hir.moe_swiglu(x, *ws, num_experts=EXPERTS, top_k=TOP_K, normalize_top_k=True))
    module = b.module()
    if lower:
        LowerHirPass(policy="fusable").apply(Context(), module)
    return module


def test_the_block_matches_mixtral_forward(block):
    x = torch.randn(2, 5, DIM, generator=torch.Generator().manual_seed(1))
    (got,) = run_function(moe_module(x.shape, lower=False), "f", [x.numpy(), *hir_weights(block)])
    with torch.no_grad():
        want = block(x).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_gradients_of_the_lowered_block_match_mixtral_autograd(block):
    x = torch.randn(2, 3, DIM, generator=torch.Generator().manual_seed(2), requires_grad=True)
    dy = torch.randn(x.shape, generator=torch.Generator().manual_seed(3))
    module = moe_module(x.shape, lower=True)
    PrepareAdPass().apply(make_context(), module)
    GradPass(func="f", wrt=("0", "1", "2", "3", "4")).apply(make_context(), module)
    module.verify()
    out, *grads = run_function(module, "f_grad", [x.detach().numpy(), *hir_weights(block), dy.numpy()])

    block.zero_grad()
    y = block(x)
    (y * dy).sum().backward()
    np.testing.assert_allclose(out, y.detach().numpy(), rtol=1e-4, atol=1e-5)
    router, gate, up, down = hir_weights_grads(block)
    for got, want in zip(grads, (x.grad.numpy(), router, gate, up, down), strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-3, atol=1e-4 * max(1.0, np.abs(want).max()))


def hir_weights_grads(moe) -> list[np.ndarray]:
    """torch's parameter gradients, in the same layouts as `hir_weights`."""
    gate_up = moe.experts.gate_up_proj.grad.numpy()
    return [
        moe.gate.weight.grad.numpy().T,
        gate_up[:, :FFN, :].transpose(0, 2, 1),
        gate_up[:, FFN:, :].transpose(0, 2, 1),
        moe.experts.down_proj.grad.numpy().transpose(0, 2, 1),
    ]
