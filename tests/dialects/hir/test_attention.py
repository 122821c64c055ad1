"""`hir.attention` and `hir.rope` against loops written here (per batch, head and query)."""

from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.dialects.hir.attention import AttentionOp, RopeOp
from rlx_xdsl.dialects.traits import Precision, Role, operand_roles, precision_class
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(10)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-attention.mlir"


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def reference_attention(q, k, v, kind, mask=None, window=None):
    """One query row at a time; kv head `h // (H / Hkv)`; masked keys get -inf."""
    batch, heads, sq, d = q.shape
    kv_heads, sk = k.shape[1], k.shape[2]
    out = np.zeros(q.shape)
    for b in range(batch):
        for h in range(heads):
            kv = h // (heads // kv_heads)
            for i in range(sq):
                pos = i + sk - sq
                scores = np.array([q[b, h, i] @ k[b, kv, j] / np.sqrt(d) for j in range(sk)], dtype=np.float64)
                for j in range(sk):
                    drop = (
                        (kind in ("causal", "sliding_window") and j > pos)
                        or (kind == "sliding_window" and j <= pos - window)
                        or (kind == "custom" and mask[b, j] < 0.5)
                    )
                    if kind == "bias":
                        scores[j] += np.broadcast_to(mask, (batch, heads, sq, sk))[b, h, i, j]
                    if drop:
                        scores[j] = -np.inf
                if np.all(np.isneginf(scores)):
                    continue
                p = np.exp(scores - scores.max())
                out[b, h, i] = (p / p.sum()) @ v[b, kv]
    return out


@pytest.mark.parametrize("kind", ["none", "causal", "sliding_window", "custom", "bias"])
def test_attention_matches_loops(kind):
    q, k, v = rand(2, 4, 3, 8), rand(2, 2, 5, 8), rand(2, 2, 5, 8)
    mask = {"custom": (RNG.random((2, 5)) > 0.4).astype(np.float32), "bias": rand(1, 4, 3, 5)}.get(kind)
    window = 2 if kind == "sliding_window" else None
    out = run_block("attention", [q, k, v, mask], num_heads=4, head_dim=8, mask_kind=kind, window=window)
    np.testing.assert_allclose(out, reference_attention(q, k, v, kind, mask, window), rtol=1e-5, atol=1e-5)


def reference_rope(x, cos, sin, n_rot):
    """NeoX pairing: dim i rotates with dim i + n_rot/2; the dims past n_rot pass through."""
    out = x.astype(np.float64).copy()
    half = n_rot // 2
    for i in range(half):
        a, b = x[..., i], x[..., i + half]
        out[..., i] = a * cos[..., i] - b * sin[..., i]
        out[..., i + half] = b * cos[..., i] + a * sin[..., i]
    return out


@pytest.mark.parametrize("n_rot", [2, 4, 8])
def test_rope_matches_pairwise_rotation(n_rot):
    x = rand(2, 3, 5, 8)
    angles = RNG.random((5, n_rot // 2))
    cos, sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)
    out = run_block("rope", [x, cos, sin], head_dim=8, n_rot=n_rot)
    np.testing.assert_allclose(out, reference_rope(x, cos, sin, n_rot), rtol=1e-5, atol=1e-5)


def test_traits_follow_mir():
    assert precision_class(AttentionOp) is Precision.COMPUTE
    assert precision_class(RopeOp) is Precision.DATA_MOVEMENT


def test_mask_operand_has_the_mask_role():
    from rlx_xdsl.building.builder import GraphBuilder

    b = GraphBuilder()
    q, m = b.input("q", [1, 2, 3, 4]), b.input("m", [1, 3])
    op = b.hir.attention(q, q, q, m, num_heads=2, head_dim=4, mask_kind="custom").owner
    assert operand_roles(op) == [Role.DATA, Role.DATA, Role.DATA, Role.MASK]


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
