"""Mixture-of-experts and LoRA ops against independent oracles: the LoRA formula in
float64 and a loop over tokens in numpy; each bit for bit against the expansion that
`rlx-unfuse` (lora_matmul) and the linalg lowering (grouped_matmul) use."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.context import Context

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.base import tensor_type
from rlx_xdsl.dialects.mir.moe import DequantGroupedMatmulOp, DequantMoeWeightsOp, GroupedMatmulOp, LoraMatmulOp
from rlx_xdsl.dialects.traits import Precision, Role, operand_roles, precision_class
from rlx_xdsl.formats.quantpack import pack
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.gradcheck import check_gradients
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.transforms.amp.mixed_precision import AutoMixedPrecisionPass
from rlx_xdsl.transforms.unfuse import UnfusePass
from rlx_xdsl.transforms.unfuse_rules.moe import (
    expand_dequant_grouped_matmul,
    expand_dequant_moe_weights,
    expand_grouped_matmul,
)

from .moe_support import before_and_after_expansion, token_loop

RNG = np.random.default_rng(23)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-moe.mlir"


def rand(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def test_precision_classes_follow_rlx():
    assert precision_class(LoraMatmulOp) is Precision.COMPUTE
    assert precision_class(GroupedMatmulOp) is Precision.COMPUTE


# mir.lora_matmul ----------------------------------------------------------------------------


@pytest.mark.parametrize("scale", [0.5, 2.0, 0.0])
def test_lora_matmul_matches_the_formula(scale):
    x, w, a, b = rand(2, 3, 4), rand(4, 5), rand(4, 2), rand(2, 5)
    out = run_op("lora_matmul", [x, w, a, b], scale=scale)
    np.testing.assert_allclose(out, x @ w + scale * ((x @ a) @ b), rtol=1e-12)


def lora_module(dtype: str):
    b = GraphBuilder("f")
    args = [b.input(n, s, dtype) for n, s in (("x", [3, 4]), ("w", [4, 5]), ("a", [4, 2]), ("b", [2, 5]))]
    b.output(b.lora_matmul(*args, scale=0.75))
    return b.module()


@pytest.mark.parametrize(("dtype", "np_dtype"), [("f32", np.float32), ("bf16", ml_dtypes.bfloat16)])
def test_lora_matmul_equals_its_unfused_chain_bit_for_bit(dtype, np_dtype):
    module = lora_module(dtype)
    inputs = [rand(*s).astype(np_dtype) for s in ((3, 4), (4, 5), (4, 2), (2, 5))]
    (fused,) = run_function(module, "f", inputs)
    UnfusePass().apply(Context(), module)
    module.verify()
    names = [op.name for op in module.walk() if op.name.startswith("mir.")]
    assert sorted(names) == ["mir.add", "mir.constant", "mir.matmul", "mir.matmul", "mir.matmul", "mir.mul"]
    (unfused,) = run_function(module, "f", inputs)
    assert fused.dtype == unfused.dtype == np_dtype
    np.testing.assert_array_equal(fused.astype(np.float32), unfused.astype(np.float32))


# mir.grouped_matmul -------------------------------------------------------------------------


@pytest.mark.parametrize("ids", [np.array([2, 0, 2, 1, 0]), np.array([1.0, 1.0, 0.0, 2.9, 0.2], np.float32)])
def test_grouped_matmul_matches_a_loop_over_tokens(ids):
    x, w = rand(5, 4), rand(3, 4, 2)
    np.testing.assert_allclose(run_op("grouped_matmul", [x, w, ids]), token_loop(x, w, np.trunc(ids)), rtol=1e-12)


def test_grouped_matmul_expert_is_an_index_operand():
    b = GraphBuilder("f")
    out = b.grouped_matmul(b.input("x", [2, 3]), b.input("w", [2, 3, 4]), b.input("e", [2], "i64"))
    assert operand_roles(out.owner) == [Role.DATA, Role.DATA, Role.INDEX]


@pytest.mark.parametrize("bad", [3, -1])
def test_grouped_matmul_out_of_range_expert_is_a_run_time_error(bad):
    with pytest.raises(KernelError, match=rf"'mir.grouped_matmul' index {bad} is out of range \[0, 3\)"):
        run_op("grouped_matmul", [rand(2, 4), rand(3, 4, 2), np.array([0, bad])])


def grouped_module(rows: int):
    b = GraphBuilder("f")
    x, w, e = b.input("x", [rows, 4]), b.input("w", [3, 4, 2]), b.input("e", [rows], "i64")
    b.output(b.grouped_matmul(x, w, e))
    return b.module()


@pytest.mark.parametrize("rows", [5, DYNAMIC])
def test_grouped_matmul_equals_its_expansion(rows):
    """The expansion `rlx-unfuse` uses (`gather`, `matmul`), with M static or dynamic: the
    same products, summed in another order by the kernel's per-expert matmuls (f32: equal
    to rounding)."""
    module = grouped_module(rows)
    inputs = [rand(5, 4, dtype=np.float32), rand(3, 4, 2, dtype=np.float32), np.array([2, 0, 2, 1, 0])]
    whole, expanded, names = before_and_after_expansion(module, inputs, GroupedMatmulOp, expand_grouped_matmul)
    np.testing.assert_allclose(whole, token_loop(*inputs), rtol=1e-5)
    assert {"mir.gather", "mir.matmul"} <= names
    np.testing.assert_allclose(whole, expanded, rtol=1e-6, atol=1e-6)


# mir.dequant_grouped_matmul -------------------------------------------------------------------

QUANT_SCHEMES = [("int8_block", 4), ("int8_block_asym", 4), ("int4_block", 4), ("fp8_e4m3", None), ("nvfp4_block", None)]


def packed_experts(w: np.ndarray, scheme: str, block: int | None) -> list[np.ndarray]:
    """`[w_q, scale, zp]` of `mir.dequant_matmul` per expert, stacked along a new expert dim;
    a `[1]` zero point is shared (the first expert's)."""
    parts = [pack(w[e], scheme, block) for e in range(len(w))]
    stacked = [np.stack([p[key] for p in parts]) for key in ("q", "scale", "zp")]
    if parts[0]["zp"].ndim == 1:
        stacked[2] = parts[0]["zp"]
    return stacked


def dequant_token_loop(x, packed, expert, scheme, block):
    """The oracle: each token through `mir.dequant_matmul` with its expert's operands."""
    w_q, scale, zp = packed
    rows = []
    for m, e in enumerate(expert):
        expert_zp = zp if zp.ndim == 1 else zp[e]
        rows.append(run_op("dequant_matmul", [x[m : m + 1], w_q[e], scale[e], expert_zp], scheme=scheme, block_size=block))
    return np.concatenate(rows)


@pytest.mark.parametrize(("scheme", "block"), QUANT_SCHEMES)
def test_dequant_grouped_matmul_matches_dequant_matmul_token_by_token(scheme, block):
    k = 32 if scheme == "nvfp4_block" else 8
    x, w, ids = rand(4, k, dtype=np.float32), rand(3, k, 2, dtype=np.float32), np.array([2, 0, 2, 1])
    packed = packed_experts(w, scheme, block)
    got = run_op("dequant_grouped_matmul", [x, *packed, ids], scheme=scheme, block_size=block)
    np.testing.assert_allclose(got, dequant_token_loop(x, packed, ids, scheme, block), rtol=1e-6, atol=1e-6)


def test_dequant_grouped_matmul_is_compute_with_an_index_expert():
    assert precision_class(DequantGroupedMatmulOp) is Precision.COMPUTE
    b = GraphBuilder("f")
    q, s, z = b.input("q", [2, 4, 3], "i8"), b.input("s", [2, 1, 3]), b.input("z", [1])
    out = b.dequant_grouped_matmul(b.input("x", [5, 4]), q, s, z, b.input("e", [5], "i64"), scheme="int8_block", block_size=4)
    assert operand_roles(out.owner) == [Role.DATA] * 4 + [Role.INDEX]


@pytest.mark.parametrize("bad", [2, -1])
def test_dequant_grouped_matmul_out_of_range_expert_is_a_run_time_error(bad):
    packed = packed_experts(rand(2, 4, 3, dtype=np.float32), "int8_block", 4)
    with pytest.raises(KernelError, match=rf"'mir.dequant_grouped_matmul' index {bad} is out of range \[0, 2\)"):
        run_op("dequant_grouped_matmul", [rand(2, 4, dtype=np.float32), *packed, np.array([0, bad])],
               scheme="int8_block", block_size=4)  # fmt: skip


def dequant_grouped_module(scheme: str, block: int | None, packed, rows, dtype: str):
    b = GraphBuilder("f")
    x = b.input("x", [rows, packed[0].shape[1] * (2 if scheme == "int4_block" else 1)], dtype)
    params = [b.input(n, a.shape, str(a.dtype).replace("uint", "ui").replace("int", "i").replace("float", "f"))
              for n, a in zip(("q", "s", "z"), packed)]  # fmt: skip
    b.output(b.dequant_grouped_matmul(x, *params, b.input("e", [rows], "i64"), scheme=scheme, block_size=block))
    return b.module()


@pytest.mark.parametrize(("scheme", "block"), [("int8_block_asym", 4), ("int4_block", 4)])
def test_dequant_grouped_matmul_equals_its_expansion(scheme, block):
    """The expansion the linalg lowering uses: per-expert `dequant_matmul`s of the identity,
    `concat`, `grouped_matmul` (f32: the same products, so equal to rounding)."""
    packed = packed_experts(rand(3, 8, 2, dtype=np.float32), scheme, block)
    module = dequant_grouped_module(scheme, block, packed, DYNAMIC, "f32")
    inputs = [rand(5, 8, dtype=np.float32), *packed, np.array([2, 0, 2, 1, 0])]
    whole, expanded, names = before_and_after_expansion(
        module, inputs, DequantGroupedMatmulOp, expand_dequant_grouped_matmul
    )
    assert {"mir.dequant_matmul", "mir.concat", "mir.grouped_matmul"} <= names
    np.testing.assert_allclose(expanded, whole, rtol=1e-6, atol=1e-6)


def test_dequant_grouped_matmul_x_gradient_by_central_differences():
    """Straight through to x with a dynamic M; the quantised operands get no gradient."""
    packed = packed_experts(rand(3, 8, 2, dtype=np.float32), "int8_block", 4)
    module = dequant_grouped_module("int8_block", 4, packed, DYNAMIC, "f64")
    check_gradients(module, "f", [rand(5, 8), *packed, np.array([2, 0, 2, 1, 0])], [0])



def test_the_fusion_pipeline_keeps_dequant_grouped_matmul_a_kernel_of_its_own():
    """RLX's is_blas boundary: no elementwise region absorbs the quantised expert matmul."""
    from rlx_xdsl.transforms.fusion.pipeline import FusionPipelinePass

    packed = packed_experts(rand(3, 8, 2, dtype=np.float32), "int8_block", 4)
    b = GraphBuilder("f")
    x, e = b.input("x", [4, 8]), b.input("e", [4], "i64")
    q, sc, z = b.input("q", [3, 8, 2], "i8"), b.input("s", [3, 2, 2]), b.input("z", [1])
    y = b.dequant_grouped_matmul(x, q, sc, z, e, scheme="int8_block", block_size=4)
    b.output(b.exp(b.relu(b.add(y, b.input("bias", [2])))))
    module = b.module()
    inputs = [rand(4, 8, dtype=np.float32), np.array([2, 0, 1, 2]), *packed, rand(2, dtype=np.float32)]
    (before,) = run_function(module, "f", inputs)
    FusionPipelinePass(target="cpu").apply(Context(), module)
    module.verify()
    top = list(module.ops.first.body.block.ops)
    assert sum(isinstance(op, DequantGroupedMatmulOp) for op in top) == 1
    (after,) = run_function(module, "f", inputs)
    np.testing.assert_allclose(after, before, rtol=1e-6)


# mir.dequant_moe_weights ----------------------------------------------------------------------


@pytest.mark.parametrize(("scheme", "block"), QUANT_SCHEMES)
def test_dequant_moe_weights_are_each_experts_dequant_matmul_of_the_identity(scheme, block):
    k = 32 if scheme == "nvfp4_block" else 8
    w_q, scale, zp = packed = packed_experts(rand(3, k, 2, dtype=np.float32), scheme, block)
    got = run_op("dequant_moe_weights", packed, scheme=scheme, block_size=block)
    eye = np.eye(k, dtype=np.float32)
    for e in range(3):
        expert_zp = zp if zp.ndim == 1 else zp[e]
        want = run_op("dequant_matmul", [eye, w_q[e], scale[e], expert_zp], scheme=scheme, block_size=block)
        np.testing.assert_array_equal(got[e], want)
    assert precision_class(DequantMoeWeightsOp) is Precision.COMPUTE


def test_dequant_moe_weights_equal_their_expansion():
    packed = packed_experts(rand(2, 8, 3, dtype=np.float32), "int8_block_asym", 4)
    b = GraphBuilder("f")
    params = [b.input(n, a.shape, "i8" if a.dtype == np.int8 else "f32") for n, a in zip(("q", "s", "z"), packed)]
    b.output(b.dequant_moe_weights(*params, scheme="int8_block_asym", block_size=4))
    whole, expanded, _ = before_and_after_expansion(b.module(), packed, DequantMoeWeightsOp, expand_dequant_moe_weights)
    np.testing.assert_array_equal(whole, expanded)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


def test_grouped_matmul_gradient_with_dynamic_rows():
    """RLX's rule needs M static; here dx and dw are built for `[?, K]` and checked by
    central differences on 5 rows."""
    b = GraphBuilder("f")
    x, w, e = b.input("x", [DYNAMIC, 4], "f64"), b.input("w", [3, 4, 2], "f64"), b.input("e", [DYNAMIC], "i64")
    b.output(b.grouped_matmul(x, w, e))
    module = b.module()
    check_gradients(module, "f", [rand(5, 4), rand(3, 4, 2), np.array([2, 0, 2, 1, 0])], [0, 1])
    grad = next(op for op in module.walk() if getattr(op, "sym_name", None) and op.sym_name.data == "f_grad")
    assert any(isinstance(op, GroupedMatmulOp) for op in grad.walk())  # dx: no [M, K, N] gather


def test_amp_runs_grouped_matmul_low_and_leaves_the_expert_ids_alone():
    b = GraphBuilder("f")
    out = b.grouped_matmul(b.input("x", [3, 4]), b.input("w", [2, 4, 5]), b.input("e", [3], "f32"))
    b.output(out)
    module = b.module()
    AutoMixedPrecisionPass(policy="torch-cpu").apply(Context(), module)
    module.verify()
    (op,) = [op for op in module.walk() if isinstance(op, GroupedMatmulOp)]
    assert [str(tensor_type(v).element_type) for v in op.operands] == ["bf16", "bf16", "f32"]


@pytest.mark.parametrize(("scheme", "block", "dtype"), [("int4_block", 4, "f32"), ("fp8_e4m3", None, "bf16"),
                                                        ("int8_block_asym", 4, "f16")])  # fmt: skip
def test_unfuse_splits_dequant_grouped_matmul_into_weights_and_grouped_matmul(scheme, block, dtype):
    """Before and after `rlx-unfuse` through the interpreter: the same products (f32
    accumulation for halves), summed per expert either way."""
    k = 32 if scheme == "nvfp4_block" else 8
    packed = packed_experts(rand(3, k, 2, dtype=np.float32), scheme, block)
    module = dequant_grouped_module(scheme, block, packed, DYNAMIC, dtype)
    np_dtype = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "f16": np.float16}[dtype]
    inputs = [rand(5, k).astype(np_dtype), *packed, np.array([2, 0, 2, 1, 0])]
    (before,) = run_function(module, "f", inputs)
    UnfusePass().apply(Context(), module)
    module.verify()
    names = {op.name for op in module.walk()}
    assert "mir.dequant_grouped_matmul" not in names and {"mir.dequant_moe_weights", "mir.grouped_matmul"} <= names
    (after,) = run_function(module, "f", inputs)
    assert after.dtype == before.dtype == np_dtype
    np.testing.assert_allclose(after.astype(np.float32), before.astype(np.float32), rtol=1e-6, atol=1e-6)


def test_grouped_matmul_sorts_rows_by_expert_with_unused_experts_and_no_rows():
    """Experts 1 and 3 get no rows; an empty batch gives `[0, N]`."""
    x, w = rand(4, 3), rand(4, 3, 2)
    ids = np.array([2, 0, 0, 2])
    np.testing.assert_allclose(run_op("grouped_matmul", [x, w, ids]), token_loop(x, w, ids), rtol=1e-12)
    assert run_op("grouped_matmul", [x[:0], w, ids[:0]]).shape == (0, 2)


@pytest.mark.parametrize(("k", "n"), [(2, 4), (4, 2)])
def test_grouped_matmul_dw_masks_rows_instead_of_per_token_outer_products(k, n):
    """dw = xᵀ (mask_e · g) by one batched matmul (masking x when K <= N, else g): no
    `scatter_add` and no `[M, K, N]` value in the gradient; float ids truncate as the kernel."""
    b = GraphBuilder("f")
    x, w, e = b.input("x", [DYNAMIC, k], "f64"), b.input("w", [3, k, n], "f64"), b.input("e", [DYNAMIC], "f64")
    b.output(b.grouped_matmul(x, w, e))
    module = b.module()
    check_gradients(module, "f", [rand(5, k), rand(3, k, n), np.array([2.5, 0.0, 2.0, 1.9, 0.1])], [0, 1])
    grad = next(op for op in module.walk() if getattr(op, "sym_name", None) and op.sym_name.data == "f_grad")
    assert not any(op.name == "mir.scatter_add" for op in grad.walk())
    shapes = [tuple(r.type.get_shape()) for op in grad.walk() for r in op.results if hasattr(r.type, "get_shape")]
    assert all(s[1:] != (k, n) or len(s) != 3 or s[0] == 3 for s in shapes)
