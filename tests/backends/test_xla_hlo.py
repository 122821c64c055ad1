"""The program the XLA backend hands to XLA for a bf16 LLaMA graph: the properties that
decide its speed on a GPU, checked on the StableHLO text (no compile: cheap on the CPU).

* A bf16 x bf16 product whose MIR result is bf16 is a dot_general with a bf16 result
  (XLA writes the narrow result; cuBLAS and XLA's CPU accumulate in f32 either way), never
  an f32 dot followed by a convert. Only the attention scores, which softmax reads in f32,
  are f32 products.
* The numbers are the interpreter's "accumulate in f32, round once", checked bit for bit
  against an exact integer oracle.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

jax = pytest.importorskip("jax")

import ml_dtypes  # noqa: E402

from rlx_xdsl.backends.xla import XlaModule, to_stablehlo  # noqa: E402
from rlx_xdsl.context import parse_module  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.llama import build_llama  # noqa: E402

LAYERS = 2
DOT = re.compile(r"(%\w+) = stablehlo\.dot_general .*: \(tensor<\S+x(\w+)>, tensor<\S+x(\w+)>\) -> tensor<\S+x(\w+)>")


@pytest.fixture(scope="module")
def llama_bf16_text() -> str:
    """The 7b4 row's shape (GQA 4:1, bf16) at a small size."""
    module = build_llama(LAYERS, batch=1, seq=16, dim=64, n_heads=8, n_kv_heads=2, ffn=96, dtype="bf16")
    return to_stablehlo(module, "llama")


def dots(text: str) -> list[tuple[str, str, str, str]]:
    """(name, lhs, rhs, result element types) of every dot_general."""
    return [m.groups() for m in DOT.finditer(text)]


def test_bf16_matmuls_write_bf16(llama_bf16_text):
    found = dots(llama_bf16_text)
    narrow = [d for d in found if d[1:] == ("bf16", "bf16", "bf16")]
    wide = [d for d in found if d[1:] == ("bf16", "bf16", "f32")]
    assert len(found) == len(narrow) + len(wide)
    # Per layer: q, k, v, o, gate, up, down projections and attention's p @ v write bf16;
    # attention's q @ k^T is f32 (the scores softmax reads).
    assert len(narrow) == 8 * LAYERS
    assert len(wide) == LAYERS


def test_no_f32_product_is_only_rounded_to_bf16(llama_bf16_text):
    """The pattern the GPU profile showed: an f32 dot whose result a convert narrows to bf16."""
    for name, *_ in dots(llama_bf16_text):
        converted = re.search(rf"stablehlo\.convert {name} : \(tensor<\S+xf32>\) -> tensor<\S+xbf16>", llama_bf16_text)
        assert converted is None, converted.group(0)


def test_bf16_matmul_accumulates_in_f32_and_rounds_once():
    """Integer-valued bf16 operands: every partial sum is exact in f32 (|sum| < 2**24) but
    not in bf16, so the only rounding an f32 accumulator makes is the final one, to the
    nearest bf16 of the exact integer product (numpy's int64 matmul, rounded by ml_dtypes)."""
    k = 256
    module = parse_module(
        f"func.func @f(%a: tensor<4x{k}xbf16>, %b: tensor<{k}x3xbf16>) -> tensor<4x3xbf16> {{\n"
        f"  %c = mir.matmul %a, %b : (tensor<4x{k}xbf16>, tensor<{k}x3xbf16>) -> tensor<4x3xbf16>\n"
        f"  func.return %c : tensor<4x3xbf16>\n}}"
    )
    rng = np.random.default_rng(0)
    a, b = rng.integers(-16, 17, (4, k)), rng.integers(-16, 17, (k, 3))
    exact = (a @ b).astype(np.float64).astype(ml_dtypes.bfloat16)
    inputs = [a.astype(ml_dtypes.bfloat16), b.astype(ml_dtypes.bfloat16)]
    assert "-> tensor<4x3xbf16>" in to_stablehlo(module, "f")
    (got,) = XlaModule(module)(*inputs)
    (interpreted,) = run_function(module, "f", inputs)
    assert np.asarray(got).tobytes() == exact.tobytes() == np.asarray(interpreted).tobytes()
