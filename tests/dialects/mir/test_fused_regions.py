"""`mir.elementwise_region` and `mir.fused_matmul_epilogue` against numpy formulas written here."""

import math
from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.builtin import TensorType, f32, i1
from xdsl.traits import RecursiveMemoryEffect

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.fused_regions import (
    ElementwiseRegionOp,
    FusedMatmulEpilogueOp,
)
from rlx_xdsl.dialects.traits import (
    Precision,
    RegionSignatureInterface,
    precision_class,
)
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.transforms.specialize import SpecializeShapesPass
from rlx_xdsl.transforms.unfuse import UnfusePass

RNG = np.random.default_rng(5)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-fused_regions.mlir"


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def build(inputs, make):
    b = GraphBuilder("f")
    args = [b.input(f"in{i}", x.shape) for i, x in enumerate(inputs)]
    out = make(b, *args)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    module = b.module()
    module.verify()
    return module


def test_region_body_broadcasts_numpy_style_not_modulo():
    """`[4, 1]` into `[4, 8]` repeats each row's value along the row (RLX's `i % 4` would not)."""
    x, y, z = rand(4, 8), np.arange(4, dtype=np.float32).reshape(4, 1), rand(8)
    module = build([x, y, z], lambda b, *a: b.elementwise_region(a, lambda rb, p, q, r: rb.relu(rb.mul(rb.add(p, q), r))))
    (out,) = run_function(module, "f", [x, y, z])
    np.testing.assert_allclose(out, np.maximum((x + y) * z, 0.0), rtol=1e-6)
    modulo = np.maximum((x + y.reshape(-1)[np.arange(32).reshape(4, 8) % 4]) * z, 0.0)
    assert not np.allclose(out, modulo)


def test_region_with_several_results_keeps_compare_as_i1():
    x, t = rand(5), np.float32(0.1).reshape(())
    module = build(
        [x, t],
        lambda b, a, c: b.elementwise_region(
            [a, c], lambda rb, p, q: (rb.compare(p, q, "gt"), rb.where(rb.compare(p, q, "gt"), p, q))
        ),
    )
    region = next(op for op in module.walk() if isinstance(op, ElementwiseRegionOp))
    assert [r.type for r in region.results] == [TensorType(i1, [5]), TensorType(f32, [5])]
    mask, chosen = run_function(module, "f", [x, t])
    assert mask.dtype == np.bool_
    np.testing.assert_array_equal(mask, x > 0.1)
    np.testing.assert_array_equal(chosen, np.where(x > 0.1, x, np.float32(0.1)))


def test_unfusing_a_region_inlines_its_body_with_equal_values():
    x, y = rand(3, 4), rand(4)
    module = build([x, y], lambda b, p, q: b.elementwise_region([p, q], lambda rb, a, c: rb.tanh(rb.sub(a, c))))
    (before,) = run_function(module, "f", [x, y])
    UnfusePass().apply(Context(), module)
    module.verify()
    assert [op.name for op in module.ops.first.body.block.ops] == ["mir.sub", "mir.tanh", "func.return"]
    (after,) = run_function(module, "f", [x, y])
    np.testing.assert_array_equal(before, after)
    np.testing.assert_allclose(after, np.tanh(x - y), rtol=1e-6)


def test_region_counts_its_steps():
    module = build([rand(2)], lambda b, a: b.elementwise_region([a], lambda rb, p: rb.neg(rb.abs(p))))
    region = next(op for op in module.walk() if isinstance(op, ElementwiseRegionOp))
    assert region.steps == 2


def test_region_body_is_retyped_by_specialize():
    """Region argument types follow the inputs (RegionOperandsInterface), so rlx-specialize can bind them."""
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 4])
    b.output(b.elementwise_region([x], lambda rb, a: rb.exp(a)))
    module = b.module()
    SpecializeShapesPass(shapes=("x=3x4",)).apply(Context(), module)
    module.verify()
    assert "tensor<?x4xf32>" not in str(module)
    region = next(op for op in module.walk() if isinstance(op, ElementwiseRegionOp))
    assert region.body.block.args[0].type == TensorType(f32, [3, 4])


def gelu(v):
    return v * 0.5 * (1.0 + np.vectorize(math.erf)(v / math.sqrt(2.0)))


def test_epilogue_matches_formula_and_unfuses_to_matmul_plus_body():
    x, w, bias, residual = rand(2, 3, 4), rand(4, 5), rand(5), rand(2, 3, 5)
    module = build(
        [x, w, bias, residual],
        lambda b, p, q, c, r: b.matmul_epilogue(p, q, [c, r], lambda rb, acc, c_, r_: rb.add(rb.gelu(rb.add(acc, c_)), r_)),
    )
    (out,) = run_function(module, "f", [x, w, bias, residual])
    expected = gelu(x.astype(np.float64) @ w + bias) + residual
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)
    UnfusePass().apply(Context(), module)
    module.verify()
    names = [op.name for op in module.ops.first.body.block.ops]
    assert names == ["mir.matmul", "mir.add", "mir.gelu", "mir.add", "func.return"]
    np.testing.assert_array_equal(run_function(module, "f", [x, w, bias, residual])[0], out)


def test_epilogue_body_receives_the_matmul_type():
    b = GraphBuilder("f")
    x, w = b.input("x", [DYNAMIC, 3, 4]), b.input("w", [4, 6], "bf16")
    out = b.matmul_epilogue(x, w, [], lambda rb, acc: rb.cast(acc, "bf16"))
    op = out.owner
    assert isinstance(op, FusedMatmulEpilogueOp) and isinstance(op, RegionSignatureInterface)
    assert op.region_arg_types(op.body) == [TensorType(f32, [DYNAMIC, 3, 6])]
    assert out.type.element_type != f32


@pytest.mark.parametrize(
    ("op", "precision"),
    [(ElementwiseRegionOp, Precision.ELEMENTWISE), (FusedMatmulEpilogueOp, Precision.COMPUTE)],
)
def test_traits(op, precision):
    assert precision_class(op) is precision
    assert op.has_trait(RecursiveMemoryEffect)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
