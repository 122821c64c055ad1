"""`hir.depthwise_conv1d_causal` against the causal sum written here."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.hir.conv import DepthwiseConv1dCausalOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import run_block

RNG = np.random.default_rng(12)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/hir/invalid-conv.mlir"


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def reference_causal_conv(x, w, left_pad):
    """`out[b, s, c] = sum_j w[c, 0, 0, j] * context[b, s + j, c]`, context = left_pad then x."""
    context = np.concatenate([left_pad, x], axis=1).astype(np.float64)
    batch, seq, channels = x.shape
    kernel = w.shape[-1]
    out = np.zeros(x.shape)
    for b in range(batch):
        for s in range(seq):
            for c in range(channels):
                out[b, s, c] = sum(w[c, 0, 0, j] * context[b, s + j, c] for j in range(kernel))
    return out


@pytest.mark.parametrize("kernel", [1, 2, 4])
def test_depthwise_conv_matches_causal_sum(kernel):
    x, w, pad = rand(2, 6, 3), rand(3, 1, 1, kernel), rand(2, kernel - 1, 3)
    out = run_block("depthwise_conv1d_causal", [x, w, pad], kernel_size=kernel)
    np.testing.assert_allclose(out, reference_causal_conv(x, w, pad), rtol=1e-5, atol=1e-5)


def test_zero_left_pad_is_a_causal_start():
    """With a zero context, output s sees only inputs 0..s: changing a later input leaves it alone."""
    x, w, pad = rand(1, 5, 2), rand(2, 1, 1, 3), np.zeros((1, 2, 2), np.float32)
    before = run_block("depthwise_conv1d_causal", [x, w, pad], kernel_size=3)
    x[0, 3] += 10.0
    after = run_block("depthwise_conv1d_causal", [x, w, pad], kernel_size=3)
    np.testing.assert_array_equal(before[0, :3], after[0, :3])
    assert not np.allclose(before[0, 3:], after[0, 3:])


def test_left_pad_refines_a_dynamic_batch():
    b = GraphBuilder()
    x = b.input("x", [DYNAMIC, 7, 4])
    out = b.hir.depthwise_conv1d_causal(x, b.param("w", [4, 1, 1, 3]), b.input("p", [2, 2, 4]), kernel_size=3)
    assert out.type == TensorType(f32, [2, 7, 4])


def test_is_compute():
    assert precision_class(DepthwiseConv1dCausalOp) is Precision.COMPUTE


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
