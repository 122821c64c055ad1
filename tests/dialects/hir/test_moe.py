"""`hir.moe_swiglu` against a loop over tokens in numpy (Mixtral's sparse-MoE block), and
the gradient of its lowering by central differences and against torch autograd."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType, f32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.conversions.hir_to_mir.lower import LowerHirPass
from rlx_xdsl.dialects.hir.moe import MoeSwigluOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(23)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-moe.mlir"


def weights(dim, experts, ffn, dtype=np.float32):
    def rand(*shape):
        return (0.5 * RNG.standard_normal(shape)).astype(dtype)

    return [rand(dim, experts), rand(experts, dim, ffn), rand(experts, dim, ffn), rand(experts, ffn, dim)]


def token_loop(x, router_w, w_gate, w_up, w_down, top_k, normalize):
    """Mixtral's block one token at a time: softmax over all experts, the k largest, renormalised."""
    tokens = x.astype(np.float64).reshape(-1, x.shape[-1])
    out = np.zeros_like(tokens)
    for t, v in enumerate(tokens):
        logits = v @ router_w
        p = np.exp(logits - logits.max())
        p /= p.sum()
        chosen = np.argsort(-p, kind="stable")[:top_k]
        w = p[chosen] / p[chosen].sum() if normalize else p[chosen]
        for weight, i in zip(w, chosen):
            gate, up = v @ w_gate[i], v @ w_up[i]
            out[t] += weight * ((gate / (1 + np.exp(-gate)) * up) @ w_down[i])
    return out.reshape(x.shape)


@pytest.mark.parametrize(("experts", "top_k", "normalize"), [(4, 2, True), (4, 2, False), (3, 1, True), (2, 2, False)])
def test_moe_block_matches_a_loop_over_tokens(experts, top_k, normalize):
    x = RNG.standard_normal((2, 5, 6)).astype(np.float32)
    w = weights(6, experts, 7)
    out = run_block("moe_swiglu", [x, *w], num_experts=experts, top_k=top_k, normalize_top_k=normalize)
    np.testing.assert_allclose(out, token_loop(x, *w, top_k, normalize), rtol=1e-4, atol=1e-5)


def moe_module(batch, normalize):
    b = GraphBuilder("f")
    x = b.input("x", [batch, 2, 3], "f64")
    ws = [b.input(n, s, "f64") for n, s in (("r", [3, 3]), ("g", [3, 3, 2]), ("u", [3, 3, 2]), ("d", [3, 2, 3]))]
    b.output(b.hir.moe_swiglu(x, *ws, num_experts=3, top_k=2, normalize_top_k=normalize))
    module = b.module()
    LowerHirPass(policy="fusable").apply(Context(), module)
    return module


@pytest.mark.parametrize("normalize", [True, False])
def test_lowered_block_gradient_by_central_differences(normalize):
    """Every operand, with a `?` batch: the router through softmax, top-k and the weights."""
    x, *w = [RNG.standard_normal((2, 2, 3))] + [a.astype(np.float64) for a in weights(3, 3, 2, np.float64)]
    check_gradients(moe_module(DYNAMIC, normalize), "f", [x, *w], [0, 1, 2, 3, 4])


def test_lowered_block_gradient_matches_torch_autograd():
    torch = pytest.importorskip("torch")
    x, *w = [RNG.standard_normal((2, 2, 3))] + [a.astype(np.float64) for a in weights(3, 3, 2, np.float64)]
    dy = RNG.standard_normal(x.shape)
    grads = check_gradients(moe_module(2, True), "f", [x, *w], [0, 1, 2, 3, 4], cotangent=dy)
    tx, tr, tg, tu, td = (torch.tensor(a, requires_grad=True) for a in (x, *w))
    tokens = tx.reshape(-1, 3)
    probs = torch.softmax(tokens @ tr, dim=-1)
    top, chosen = torch.topk(probs, 2, dim=-1)
    top = top / top.sum(-1, keepdim=True)
    out = torch.zeros_like(tokens)
    for t in range(tokens.shape[0]):
        for j in range(2):
            i = int(chosen[t, j])
            h = torch.nn.functional.silu(tokens[t] @ tg[i]) * (tokens[t] @ tu[i])
            out[t] = out[t] + top[t, j] * (h @ td[i])
    (out.reshape(x.shape) * torch.tensor(dy)).sum().backward()
    for got, want in zip(grads, (tx, tr, tg, tu, td), strict=True):
        np.testing.assert_allclose(got, want.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_result_type_is_x_type_and_dynamic_batch_is_kept():
    b = GraphBuilder()
    x = b.input("x", [DYNAMIC, 3, 4])
    ws = [b.param(n, s) for n, s in (("r", [4, 2]), ("g", [2, 4, 5]), ("u", [2, 4, 5]), ("d", [2, 5, 4]))]
    out = b.hir.moe_swiglu(x, *ws, num_experts=2, top_k=1)
    assert out.type == TensorType(f32, [DYNAMIC, 3, 4])
    assert out.owner.block_label() == "moe_swiglu" and out.owner.routing() == (2, 1, True)


def test_is_compute():
    assert precision_class(MoeSwigluOp) is Precision.COMPUTE


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
