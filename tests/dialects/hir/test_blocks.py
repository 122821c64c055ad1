"""`hir.llama_decoder_block` against a LLaMA layer written here in numpy (float64)."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.hir.blocks import LlamaDecoderBlockOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(13)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-blocks.mlir"


def rand(*shape, scale=1.0):
    return (scale * RNG.standard_normal(shape)).astype(np.float32)


def rms(x, g, b, eps):
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * g + b


def heads_of(x, n, hd):
    """[B, S, n*hd] -> [B, n, S, hd]."""
    batch, seq, _ = x.shape
    return x.reshape(batch, seq, n, hd).transpose(0, 2, 1, 3)


def rotate(x, cos, sin):
    half = x.shape[-1] // 2
    a, b = x[..., :half], x[..., half:]
    return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)


def reference_layer(x, w, cos, sin, heads, kv_heads, eps, kind="causal", mask=None, window=None):
    """Pre-norm GQA attention with RoPE, then a pre-norm SwiGLU feed-forward, both residual."""
    f = {k: v.astype(np.float64) for k, v in w.items()}
    x = x.astype(np.float64)
    batch, seq, dim = x.shape
    hd = f["q_w"].shape[1] // heads
    h = rms(x, f["ln1_g"], f["ln1_b"], eps)
    q = rotate(heads_of(h @ f["q_w"], heads, hd), cos, sin)
    k = rotate(heads_of(h @ f["k_w"], kv_heads, hd), cos, sin)
    v = heads_of(h @ f["v_w"], kv_heads, hd)
    k, v = (np.repeat(t, heads // kv_heads, axis=1) for t in (k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
    i, j = np.arange(seq)[:, None], np.arange(seq)[None, :]
    keep = np.ones((seq, seq), bool)
    if kind in ("causal", "sliding_window"):
        keep = j <= i
    if kind == "sliding_window":
        keep &= j > i - window
    if kind == "custom":
        keep = (mask >= 0.5)[:, None, None, :]
    if kind == "bias":
        scores = scores + mask
    scores = np.where(keep, scores, -np.inf)
    p = np.exp(scores - scores.max(-1, keepdims=True))
    attn = (p / p.sum(-1, keepdims=True)) @ v
    merged = attn.transpose(0, 2, 1, 3).reshape(batch, seq, heads * hd)
    x = x + merged @ f["o_w"]
    n = rms(x, f["ln2_g"], f["ln2_b"], eps)
    g = n @ f["gate_w"]
    return x + (g / (1 + np.exp(-g)) * (n @ f["up_w"])) @ f["down_w"]


def layer_weights(dim, heads, kv_heads, hd, ffn):
    s = 0.3
    return {
        "ln1_g": 1 + rand(dim, scale=0.1), "ln1_b": rand(dim, scale=0.1),
        "q_w": rand(dim, heads * hd, scale=s), "k_w": rand(dim, kv_heads * hd, scale=s),
        "v_w": rand(dim, kv_heads * hd, scale=s), "o_w": rand(heads * hd, dim, scale=s),
        "ln2_g": 1 + rand(dim, scale=0.1), "ln2_b": rand(dim, scale=0.1),
        "gate_w": rand(dim, ffn, scale=s), "up_w": rand(dim, ffn, scale=s), "down_w": rand(ffn, dim, scale=s),
    }  # fmt: skip


def tables(seq, hd):
    angles = np.outer(np.arange(seq), 10000.0 ** (-np.arange(0, hd, 2) / hd))
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


@pytest.mark.parametrize(
    ("heads", "kv_heads", "kind"),
    [(4, 2, "causal"), (4, 4, "none"), (2, 1, "sliding_window"), (4, 1, "custom"), (2, 2, "bias")],
)
def test_llama_block_matches_numpy_layer(heads, kv_heads, kind):
    batch, seq, hd, ffn = 2, 5, 4, 12
    dim = 8
    x = rand(batch, seq, dim)
    w = layer_weights(dim, heads, kv_heads, hd, ffn)
    cos, sin = tables(seq, hd)
    mask = {"custom": (RNG.random((batch, seq)) > 0.3).astype(np.float32), "bias": rand(batch, 1, seq, seq)}.get(kind)
    if kind == "custom":
        mask[:, 0] = 1.0  # every query keeps at least one key
    window = 2 if kind == "sliding_window" else None
    out = run_block(
        "llama_decoder_block", [x, *w.values(), cos, sin, mask],
        num_heads=heads, head_dim=hd, num_kv_heads=kv_heads, eps=1e-5, mask_kind=kind, window=window,
    )  # fmt: skip
    expected = reference_layer(x, w, cos, sin, heads, kv_heads, 1e-5, kind, mask, window)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


def test_result_type_follows_x_and_the_output_projections():
    b = GraphBuilder()
    x = b.input("x", [DYNAMIC, 3, 8])
    w = {k: b.param(k, v.shape) for k, v in layer_weights(8, 2, 1, 4, 6).items()}
    cos = b.input("cos", [3, 2])
    out = b.hir.llama_decoder_block(x, *w.values(), cos, cos, num_heads=2, head_dim=4, num_kv_heads=1)
    assert out.type == TensorType(f32, [DYNAMIC, 3, 8])
    assert out.owner.block_label() == "llama_decoder_block"


def test_is_compute():
    assert precision_class(LlamaDecoderBlockOp) is Precision.COMPUTE


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
