"""mir.attention and mir.rope against independent oracles (loop formulas and ONNX)."""

import math
from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import DYNAMIC_INDEX, TensorType, bf16
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(11)
TOL = {"rtol": 1e-5, "atol": 1e-5}
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-attention.mlir"


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def qkv(batch=2, heads=4, kv_heads=4, sq=3, sk=3, dim=8):
    return randn(batch, heads, sq, dim), randn(batch, kv_heads, sk, dim), randn(batch, kv_heads, sk, dim)


def reference_attention(q, k, v, *, scale=None, softcap=None, bias=None, allowed=None):
    """Textbook attention in float64, one (batch, head, query) row at a time.

    `allowed(b, i, j)` says whether query i of batch b sees key j; a row that sees
    no key stays zero.
    """
    batch, heads, sq, dim = q.shape
    kv_heads, sk = k.shape[1], k.shape[2]
    scale = 1 / math.sqrt(dim) if scale is None else scale
    bias = np.zeros((1, 1, 1, 1)) if bias is None else bias.astype(np.float64)
    bias = np.broadcast_to(bias, (batch, heads, sq, sk))
    out = np.zeros(q.shape)
    for b in range(batch):
        for h in range(heads):
            kh = h // (heads // kv_heads)
            scores = q[b, h].astype(np.float64) @ k[b, kh].astype(np.float64).T * scale
            if softcap is not None:
                scores = softcap * np.tanh(scores / softcap)
            scores = scores + bias[b, h]
            for i in range(sq):
                keys = [j for j in range(sk) if allowed is None or allowed(b, i, j)]
                if not keys:
                    continue
                weights = np.exp(scores[i, keys] - scores[i, keys].max())
                out[b, h, i] = (weights / weights.sum()) @ v[b, kh][keys].astype(np.float64)
    return out


def end_aligned_causal(sq, sk, window=None):
    """Query i sits at key position i + sk - sq; it sees the `window` keys up to there."""
    def allowed(b, i, j):
        position = i + sk - sq
        return j <= position and (window is None or j > position - window)

    return allowed


# ONNX Attention (opset 23) --------------------------------------------------


def test_no_mask_matches_onnx():
    q, k, v = qkv(sq=3, sk=5)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8)
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v]), **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v), **TOL)


def test_causal_matches_onnx():
    q, k, v = qkv(sq=4, sk=4)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="causal")
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v], is_causal=1), **TOL)


def test_causal_with_kv_cache_aligns_queries_with_last_keys():
    """ONNX's past_key/past_value offsets the causal frontier as RLX's end alignment does."""
    q, k, v = qkv(sq=2, sk=5)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="causal")
    past, new = slice(0, 3), slice(3, 5)
    expected = onnx_run(
        "Attention", [q, k[:, :, new], v[:, :, new], None, k[:, :, past], v[:, :, past]],
        n_outputs=3, is_causal=1,
    )[0]  # fmt: skip
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v, allowed=end_aligned_causal(2, 5)), **TOL)


@pytest.mark.parametrize("bias_shape", [(2, 4, 3, 5), (1, 1, 3, 5), (5,)])
def test_bias_matches_onnx(bias_shape):
    q, k, v = qkv(sq=3, sk=5)
    bias = randn(*bias_shape)
    out = run_op("attention", [q, k, v, bias], num_heads=4, head_dim=8, mask_kind="bias")
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v, bias]), **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v, bias=bias), **TOL)


def test_softcap_matches_onnx():
    q, k, v = qkv()
    q *= 4  # large logits, so the cap matters
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, attn_logit_softcap=2.0)
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v], softcap=2.0), **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v, softcap=2.0), **TOL)
    uncapped = run_op("attention", [q, k, v], num_heads=4, head_dim=8)
    assert not np.allclose(out, uncapped, atol=1e-3)


def test_score_scale_matches_onnx():
    q, k, v = qkv()
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, score_scale=0.7)
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v], scale=0.7), **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v, scale=0.7), **TOL)


def test_grouped_query_attention_matches_onnx():
    q, k, v = qkv(heads=6, kv_heads=2, sq=3, sk=4)
    out = run_op("attention", [q, k, v], num_heads=6, head_dim=8, mask_kind="causal")
    expected = onnx_run(
        "Attention", [q, k[:, :, 1:], v[:, :, 1:], None, k[:, :, :1], v[:, :, :1]],
        n_outputs=3, is_causal=1, q_num_heads=6, kv_num_heads=2,
    )[0]  # fmt: skip
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_attention(q, k, v, allowed=end_aligned_causal(3, 4)), **TOL)


def test_softcap_then_bias_then_causal_combine_like_onnx():
    q, k, v = qkv(sq=4, sk=4)
    bias = randn(4, 4)
    out = run_op(
        "attention", [q, k, v, bias], num_heads=4, head_dim=8, mask_kind="bias",
        score_scale=0.5, attn_logit_softcap=1.5,
    )  # fmt: skip
    expected = onnx_run("Attention", [q, k, v, bias], scale=0.5, softcap=1.5)
    np.testing.assert_allclose(out, expected, **TOL)


# Masks ONNX's opset 23 does not express directly ---------------------------


@pytest.mark.parametrize(("sq", "sk", "window"), [(4, 4, 2), (3, 6, 3), (1, 5, 1), (2, 5, 9)])
def test_sliding_window_matches_formula(sq, sk, window):
    q, k, v = qkv(sq=sq, sk=sk)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="sliding_window", window=window)
    expected = reference_attention(q, k, v, allowed=end_aligned_causal(sq, sk, window))
    np.testing.assert_allclose(out, expected, **TOL)


def test_sliding_window_matches_onnx_left_window():
    """Opset 25's left_window_size = n - 1 keeps the same n keys as RLX's window n."""
    q, k, v = qkv(sq=5, sk=5)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="sliding_window", window=2)
    expected = onnx_run("Attention", [q, k, v], opset=25, is_causal=1, left_window_size=1)
    np.testing.assert_allclose(out, expected, **TOL)


def test_window_wider_than_keys_equals_causal():
    q, k, v = qkv(sq=3, sk=5)
    sliding = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="sliding_window", window=5)
    causal = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="causal")
    np.testing.assert_array_equal(sliding, causal)


def test_custom_mask_matches_formula_and_zeroes_fully_masked_rows():
    q, k, v = qkv(sq=3, sk=5)
    keep = np.array([[1, 0.2, 0.5, 0.7, 0], [0.4, 0, 0.1, 0.49, 0]], np.float32)  # 0.5 keeps; batch 1 drops all
    out = run_op("attention", [q, k, v, keep], num_heads=4, head_dim=8, mask_kind="custom")
    expected = reference_attention(q, k, v, allowed=lambda b, i, j: keep[b, j] >= 0.5)
    np.testing.assert_allclose(out, expected, **TOL)
    assert not np.isnan(out).any()
    np.testing.assert_array_equal(out[1], 0)
    as_bool = (keep >= 0.5)[:, None, None, :]
    np.testing.assert_allclose(out, onnx_run("Attention", [q, k, v, as_bool]), **TOL)


def test_causal_with_more_queries_than_keys_gives_zero_rows():
    q, k, v = qkv(sq=5, sk=3)
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="causal")
    np.testing.assert_allclose(out, reference_attention(q, k, v, allowed=end_aligned_causal(5, 3)), **TOL)
    np.testing.assert_array_equal(out[:, :, :2], 0)


def test_bias_of_minus_infinity_zeroes_the_row():
    q, k, v = qkv(sq=2, sk=3)
    bias = np.zeros((2, 3), np.float32)
    bias[0] = -np.inf
    out = run_op("attention", [q, k, v, bias], num_heads=4, head_dim=8, mask_kind="bias")
    np.testing.assert_array_equal(out[:, :, 0], 0)
    np.testing.assert_allclose(out[:, :, 1], reference_attention(q, k, v)[:, :, 1], **TOL)


# Dtypes -----------------------------------------------------------------------


@pytest.mark.parametrize(("dtype", "tol"), [(ml_dtypes.bfloat16, 3e-2), (np.float16, 3e-3), (np.float64, 1e-12)])
def test_attention_computes_in_operand_dtype(dtype, tol):
    q, k, v = (x.astype(dtype) for x in qkv())
    out = run_op("attention", [q, k, v], num_heads=4, head_dim=8, mask_kind="causal")
    assert out.dtype == dtype
    expected = reference_attention(q, k, v, allowed=end_aligned_causal(3, 3))
    np.testing.assert_allclose(out.astype(np.float64), expected, rtol=tol, atol=tol)


# RoPE -------------------------------------------------------------------------


def rope_tables(seq, n_rot, base=10000.0):
    """Standard RoPE angles: position p, pair i rotates by p / base^(2i / n_rot)."""
    inv_freq = base ** (-np.arange(0, n_rot, 2) / n_rot)
    angles = np.arange(seq)[:, None] * inv_freq[None, :]
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def reference_rope(x, cos, sin, n_rot):
    """NeoX rotation written pair by pair: dim i pairs with dim i + n_rot / 2."""
    half = n_rot // 2
    cos = np.broadcast_to(cos, (*x.shape[:-1], half)).astype(np.float64)
    sin = np.broadcast_to(sin, (*x.shape[:-1], half)).astype(np.float64)
    x = x.astype(np.float64)
    out = x.copy()
    for i in range(half):
        a, b = x[..., i], x[..., i + half]
        out[..., i] = a * cos[..., i] - b * sin[..., i]
        out[..., i + half] = b * cos[..., i] + a * sin[..., i]
    return out


@pytest.mark.parametrize("n_rot", [8, 6, 2])
def test_rope_matches_onnx_with_position_ids(n_rot):
    x = randn(2, 3, 5, 8)
    cos, sin = rope_tables(5, n_rot)
    out = run_op("rope", [x, cos, sin], head_dim=8, n_rot=n_rot)
    positions = np.tile(np.arange(5), (2, 1))
    expected = onnx_run("RotaryEmbedding", [x, cos, sin, positions], interleaved=0, rotary_embedding_dim=n_rot)
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_rope(x, cos, sin, n_rot), **TOL)
    np.testing.assert_array_equal(out[..., n_rot:], x[..., n_rot:])


def test_rope_per_batch_tables_match_onnx_3d_caches():
    x = randn(2, 3, 4, 6)
    cos, sin = randn(2, 4, 2), randn(2, 4, 2)  # [B, S, n_rot / 2]
    out = run_op("rope", [x, cos[:, None], sin[:, None]], head_dim=6, n_rot=4)
    expected = onnx_run("RotaryEmbedding", [x, cos, sin], interleaved=0, rotary_embedding_dim=4)
    np.testing.assert_allclose(out, expected, **TOL)
    np.testing.assert_allclose(out, reference_rope(x, cos[:, None], sin[:, None], 4), **TOL)


def test_rope_rotation_preserves_pair_norms():
    x = randn(1, 2, 7, 4)
    cos, sin = rope_tables(7, 4)
    out = run_op("rope", [x, cos, sin], head_dim=4, n_rot=4)
    norms = lambda t: np.hypot(t[..., :2], t[..., 2:])
    np.testing.assert_allclose(norms(out), norms(x), rtol=1e-5)


def test_rope_bf16_stays_bf16():
    x = randn(1, 2, 3, 4).astype(ml_dtypes.bfloat16)
    cos, sin = (t.astype(ml_dtypes.bfloat16) for t in rope_tables(3, 4))
    out = run_op("rope", [x, cos, sin], head_dim=4, n_rot=4)
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_allclose(out.astype(np.float64), reference_rope(x, cos, sin, 4), rtol=2e-2, atol=2e-2)


# Definitions ------------------------------------------------------------------


def test_traits_and_defaults():
    b = GraphBuilder("f")
    q = b.input("q", [DYNAMIC_INDEX, 2, DYNAMIC_INDEX, 4], bf16)
    k = b.input("k", [DYNAMIC_INDEX, 1, 7, 4], bf16)
    out = b.attention(q, k, k, num_heads=2, head_dim=4)
    op = out.owner
    assert op.mask_kind.data == "none" and op.window is None and op.score_scale is None
    assert op.scale() == pytest.approx(0.5)
    assert out.type == TensorType(bf16, [DYNAMIC_INDEX, 2, DYNAMIC_INDEX, 4])
    assert precision_class(op) == Precision.COMPUTE
    x = b.input("x", [3, DYNAMIC_INDEX], bf16)
    rope = b.rope(x, b.input("c", [3, 1], bf16), b.input("s", [3, 1], bf16), head_dim=4, n_rot=2)
    assert rope.type == TensorType(bf16, [3, 4])  # the `?` last dim is head_dim
    assert precision_class(rope.owner) == Precision.DATA_MOVEMENT


def test_builder_rejects_missing_mask():
    b = GraphBuilder("f")
    q = b.input("q", [1, 2, 3, 4])
    with pytest.raises(VerifyException, match="'mir.attention' mask_kind bias requires a mask operand"):
        b.attention(q, q, q, num_heads=2, head_dim=4, mask_kind="bias")


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
