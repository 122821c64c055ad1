"""Softmax cross-entropy lowers to loops IREE's CUDA backend can compile (issue 20).

IREE 3.13 rejected an 8x64 SCE (and so the LLaMA training graph) for CUDA with
"'func.func' op failed to distribute" while the label's logit was summed out of the
row under a `class == label` mask; the lowering now gathers it with `tensor.extract`.
Compile only: no GPU is needed. The gather's edge cases (labels outside `[0, C)`,
NaN, float labels truncated toward zero, `ignore_index`) run on IREE CPU against the
interpreter.
"""

import numpy as np
import pytest

pytest.importorskip("iree.compiler", reason="needs iree-base-compiler (pip install -e '.[iree]')")

from rlx_xdsl.backends import iree  # noqa: E402
from rlx_xdsl.context import make_context, parse_module  # noqa: E402
from rlx_xdsl.run import run_function  # noqa: E402
from rlx_xdsl.testing.differential import assert_matches  # noqa: E402
from rlx_xdsl.testing.training import build_llama_loss  # noqa: E402
from rlx_xdsl.transforms import get_all_passes  # noqa: E402
from rlx_xdsl.transforms.pipeline import parse_pipeline, run_passes  # noqa: E402

CUDA = iree.device_named("cuda", "sm_89")


def sce(rows: int, classes: int, label: str = "i64", attrs: str = "") -> str:
    x, y, r = f"tensor<{rows}x{classes}xf32>", f"tensor<{rows}x{label}>", f"tensor<{rows}xf32>"
    return f"""func.func @sce(%x: {x}, %y: {y}) -> {r} {{
  %0 = mir.softmax_cross_entropy_with_logits %x, %y{attrs} : ({x}, {y}) -> {r}
  func.return %0 : {r}
}}"""


def sce_backward(rows: int, classes: int) -> str:
    x, y, r = f"tensor<{rows}x{classes}xf32>", f"tensor<{rows}xi64>", f"tensor<{rows}xf32>"
    return f"""func.func @sce_backward(%x: {x}, %y: {y}, %d: {r}) -> {x} {{
  %0 = mir.softmax_cross_entropy_backward %x, %y, %d : ({x}, {y}, {r}) -> {x}
  func.return %0 : {x}
}}"""


def compiles_for_cuda(module) -> None:
    """Raises `IreeCompileError` with iree-compile's first error if it does not."""
    iree.compile_text(iree.lowered_text(module), CUDA)


def test_sce_compiles_for_cuda():
    """i64 and f32 labels, ignore_index, a 128x1024 loss and the backward, in one module
    (one compile: a CUDA compile is the cost of this test)."""
    variants = [
        sce(8, 64), sce(8, 64, "f32"), sce(8, 64, "1xi32", " ignore_index = -100"), sce(128, 1024),
        sce_backward(8, 64),
    ]  # fmt: skip
    names = ["sce_i64", "sce_f32", "sce_ignore", "sce_wide", "sce_backward"]
    text = "\n".join(v.replace(f"@{v.split('@')[1].split('(')[0]}(", f"@{n}(", 1) for v, n in zip(variants, names))
    compiles_for_cuda(parse_module(text))


def test_the_llama_training_graph_compiles_for_cuda():
    """One layer, 8 tokens, vocab 64: the loss is the 8x64 SCE that used to fail."""
    module = build_llama_loss(1, seq=8, dim=16, n_heads=2, n_kv_heads=2, ffn=32, vocab=64)
    grad = "rlx-prepare-ad,rlx-grad{func=llama},rlx-dce"
    run_passes(parse_pipeline(grad, get_all_passes()).passes, make_context(), module)
    compiles_for_cuda(module)


def test_the_gathered_label_keeps_the_kernel_semantics_on_iree_cpu():
    """Labels outside [0, C), NaN, floats truncated toward zero (-0.5 is class 0), a
    float past i64's range, and an ignored row, with `-inf` logits of other classes."""
    module = parse_module(sce(8, 5, "f32", " ignore_index = 3"))
    logits = np.random.default_rng(0).standard_normal((8, 5)).astype(np.float32)
    logits[[0, 1, 5], [4, 0, 2]] = -np.inf
    labels = np.array([-0.5, 4.9, -1.0, 5.0, np.nan, 1e30, 3.7, 2.0], np.float32)
    expected = run_function(module, "sce", [logits, labels])
    (got,) = iree.IreeModule(module).run("sce", [logits, labels])
    assert np.isfinite(expected[0]).all()
    assert_matches(got, expected[0], True, "@sce")
