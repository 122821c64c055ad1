"""The expert ops' GGUF schemes against the `gguf` package (llama.cpp's Python reader):
`w_q [E, N, R]` is a GGUF expert stack (`ffn_gate_exps` …: per expert, N rows of K values
in GGML blocks), each expert decoded by gguf's `dequantize`; tokens by a loop in float64."""

import gguf
import numpy as np
import pytest
from gguf import quants

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.transforms.unfuse_rules.moe import expand_dequant_grouped_matmul

from .moe_support import before_and_after_expansion, token_loop

RNG = np.random.default_rng(2323)
T = gguf.GGMLQuantizationType
TYPES = {"gguf_q4_0": T.Q4_0, "gguf_q8_0": T.Q8_0, "gguf_q2_k": T.Q2_K, "gguf_q3_k": T.Q3_K,
         "gguf_q4_k": T.Q4_K, "gguf_q5_k": T.Q5_K, "gguf_q6_k": T.Q6_K}  # fmt: skip
SCALES_AT = {"gguf_q8_0": (0,), "gguf_q4_0": (0,), "gguf_q6_k": (208,), "gguf_q4_k": (0, 2), "gguf_q5_k": (0, 2),
             "gguf_q2_k": (80, 82), "gguf_q3_k": (108,)}  # fmt: skip
"""Where a block keeps its f16 scales (`d`, and the K-quants' `dmin`)."""
UNUSED = np.zeros(1, np.float32)


def random_experts(scheme: str, experts: int, n: int, blocks: int) -> np.ndarray:
    """Random codes with sane f16 scales, `[E, N, blocks * bytes]`."""
    _, size = gguf.GGML_QUANT_SIZES[TYPES[scheme]]
    raw = RNG.integers(0, 256, (experts * n * blocks, size)).astype(np.uint8)
    for at in SCALES_AT[scheme]:
        raw[:, at : at + 2] = RNG.uniform(-2, 2, len(raw)).astype(np.float16).view(np.uint8).reshape(-1, 2)
    return raw.reshape(experts, n, blocks * size)


def gguf_expert_weights(w_q: np.ndarray, scheme: str) -> np.ndarray:
    """The oracle's `W[E, K, N]`: each expert's rows decoded by gguf, transposed."""
    return np.stack([quants.dequantize(w, TYPES[scheme]).T for w in w_q])


@pytest.mark.parametrize("scheme", sorted(TYPES))
def test_dequant_moe_weights_decode_each_expert_as_gguf_does(scheme):
    w_q = random_experts(scheme, 2, 3, 1)
    got = run_op("dequant_moe_weights", [w_q, UNUSED, UNUSED], scheme=scheme)
    np.testing.assert_array_equal(got, gguf_expert_weights(w_q, scheme))


@pytest.mark.parametrize("scheme", ["gguf_q4_0", "gguf_q8_0"])
def test_gguf_quantize_expert_stacks_through_dequant_grouped_matmul(scheme):
    """gguf's `quantize` writes the expert stack; tokens against a float64 loop."""
    w = RNG.standard_normal((3, 4, 64)).astype(np.float32)  # [E, N, K], as GGUF's ne = [K, N, E]
    w_q = quants.quantize(w.reshape(-1, 64), TYPES[scheme]).reshape(3, 4, -1)
    x, ids = RNG.standard_normal((5, 64)).astype(np.float32), np.array([2, 0, 2, 1, 0])
    got = run_op("dequant_grouped_matmul", [x, w_q, UNUSED, UNUSED, ids], scheme=scheme)
    want = token_loop(x, gguf_expert_weights(w_q, scheme).astype(np.float64), ids)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheme", ["gguf_q4_k", "gguf_q6_k"])
def test_dequant_grouped_matmul_k_quants_match_a_token_loop(scheme):
    w_q = random_experts(scheme, 3, 2, 1)
    x, ids = RNG.standard_normal((4, 256)).astype(np.float32), np.array([1, 1, 0, 2])
    got = run_op("dequant_grouped_matmul", [x, w_q, UNUSED, UNUSED, ids], scheme=scheme)
    want = token_loop(x, gguf_expert_weights(w_q, scheme).astype(np.float64), ids)
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


def gguf_module(scheme: str, w_q: np.ndarray, rows: int, dtype: str):
    b = GraphBuilder("f")
    k = w_q.shape[2] // gguf.GGML_QUANT_SIZES[TYPES[scheme]][1] * gguf.GGML_QUANT_SIZES[TYPES[scheme]][0]
    x, q = b.input("x", [rows, k], dtype), b.input("q", list(w_q.shape), "ui8")
    s, z, e = b.input("s", [1]), b.input("z", [1]), b.input("e", [rows], "i64")
    b.output(b.dequant_grouped_matmul(x, q, s, z, e, scheme=scheme))
    return b.module()


def test_gguf_dequant_grouped_matmul_equals_its_expansion():
    """Per-expert `dequant_matmul`s of the identity on the flattened rows, `concat`, `grouped_matmul`."""
    w_q = random_experts("gguf_q4_0", 3, 2, 2)
    module = gguf_module("gguf_q4_0", w_q, DYNAMIC, "f32")
    inputs = [RNG.standard_normal((5, 64)).astype(np.float32), w_q, UNUSED, UNUSED, np.array([2, 0, 2, 1, 0])]
    whole, expanded, names = before_and_after_expansion(
        module, inputs, DequantGroupedMatmulOp, expand_dequant_grouped_matmul
    )
    assert {"mir.dequant_matmul", "mir.concat", "mir.grouped_matmul"} <= names
    np.testing.assert_allclose(expanded, whole, rtol=1e-5, atol=1e-5)


def test_gguf_dequant_grouped_matmul_x_gradient_by_central_differences():
    """Straight through to x (dynamic M), as `dequant_matmul`; the bytes get no gradient."""
    w_q = random_experts("gguf_q8_0", 2, 3, 1)
    module = gguf_module("gguf_q8_0", w_q, DYNAMIC, "f64")
    check_gradients(module, "f", [RNG.standard_normal((4, 32)), w_q, UNUSED, UNUSED, np.array([1, 0, 1, 1])], [0])
