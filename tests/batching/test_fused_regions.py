"""`rlx-vmap` of the kernels with a body (`mir.elementwise_region` with and without a
prologue, `mir.transform_region`, `mir.batch_elementwise_region` with shared scalar and
per-channel inputs, with and without a prologue, `mir.fused_matmul_epilogue`):
batched through their unfuse rules' primitives, with no loop over the examples, and equal
to each example computed one by one by a numpy formula written from the ops' definitions."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest

from rlx_xdsl.batching.vmap import build_vmap
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir import fused_regions
from rlx_xdsl.ir.printer import print_ir
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.op_cases import (
    BATCH_PROLOGUE_CASE,
    BATCH_REGION_CASE,
    ELEMENTWISE_REGION_CASE,
    EPILOGUE_CASE,
    PROLOGUE_CASE,
)

N = 3
RNG = np.random.default_rng(37)

TRANSFORM_CASE = """func.func @transform_region(%x: tensor<1x2x2x3xf32>) -> tensor<1x2x8x12xf32> {
  %0 = mir.transform_region %x steps = ["resize_nearest_2x", "resize_nearest_2x"] : (tensor<1x2x2x3xf32>) -> tensor<1x2x8x12xf32>
  func.return %0 : tensor<1x2x8x12xf32>
}"""


def up(x: np.ndarray) -> np.ndarray:
    """The 2x nearest resize of `[N, C, H, W]`: each pixel a 2x2 block."""
    return x.repeat(2, axis=2).repeat(2, axis=3)


def silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def elementwise_region(x, y, t):
    s = x + y
    m = s > t
    return np.tanh(np.where(m, s, t)), m


CASES = {
    # name: (source, argument shapes, numpy formula of one example, tolerance)
    "elementwise_region": (
        ELEMENTWISE_REGION_CASE,
        [(4, 8), (4, 1), ()],
        elementwise_region,
        1e-6,
    ),
    "elementwise_region_prologue": (
        PROLOGUE_CASE,
        [(1, 2, 4, 6), (1, 2, 2, 3)],
        lambda a, x: (np.tanh(a + up(x)),),
        1e-6,
    ),
    "transform_region": (TRANSFORM_CASE, [(1, 2, 2, 3)], lambda x: (up(up(x)),), 0),
    "batch_elementwise_region": (
        BATCH_REGION_CASE,
        [(2, 3), (2, 3), (2, 3), (1, 3), ()],
        lambda s0, s1, s2, m, k: (
            np.concatenate([np.tanh((s - m) * k) for s in (s0, s1, s2)], axis=0),
        ),
        1e-6,
    ),
    "batch_elementwise_region_prologue": (
        BATCH_PROLOGUE_CASE,
        [(1, 2, 2, 3), (1, 2, 2, 3), (1, 2, 1, 1), ()],
        lambda s0, s1, m, k: (
            np.concatenate([(up(s) - m) * k for s in (s0, s1)], axis=0),
        ),
        1e-6,
    ),
    "fused_matmul_epilogue": (
        EPILOGUE_CASE,
        [(3, 4), (4, 5), (5,), (3, 5)],
        lambda x, w, b, r: ((silu(x @ w + b) + r).astype(ml_dtypes.bfloat16),),
        1e-2,
    ),
}


def _configs(count: int) -> list[list[int]]:
    """Each argument alone, and all of them together."""
    return [[i] for i in range(count)] + [list(range(count))]


@pytest.mark.parametrize("name", CASES)
def test_vmap_batches_the_primitives_with_no_loop_and_matches_numpy_per_example(name):
    source, shapes, formula, tol = CASES[name]
    for batched in _configs(len(shapes)):
        module = parse_module(source)
        vmapped = build_vmap(module, name, [str(i) for i in batched], N)
        module.verify()
        names = {op.name for op in vmapped.walk()}
        assert not names & {"mir.scan", *(op.name for op in fused_regions.OPS)}, (
            print_ir(vmapped)
        )
        examples = [
            [RNG.standard_normal(s).astype(np.float32) for s in shapes]
            for _ in range(N)
        ]
        examples = [
            [ex[i] if i in batched else examples[0][i] for i in range(len(shapes))]
            for ex in examples
        ]
        inputs = [
            np.stack([ex[i] for ex in examples]) if i in batched else examples[0][i]
            for i in range(len(shapes))
        ]
        got = run_function(module, f"{name}_vmap", inputs)
        per_example = [formula(*ex) for ex in examples]
        for k, g in enumerate(got):
            expected = np.stack([np.asarray(outs[k]) for outs in per_example])
            assert g.shape == expected.shape and g.dtype == expected.dtype, (
                k,
                g.shape,
                expected.shape,
                g.dtype,
            )
            np.testing.assert_allclose(
                g.astype(np.float64), expected.astype(np.float64), rtol=tol, atol=tol
            )
        # and the interpreter before the batching, example by example
        for ex, outs in zip(examples, per_example, strict=True):
            for g, x in zip(run_function(module, name, ex), outs, strict=True):
                np.testing.assert_allclose(
                    g.astype(np.float64),
                    np.asarray(x).astype(np.float64),
                    rtol=tol,
                    atol=tol,
                )
