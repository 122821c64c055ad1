"""Gather, scatter_add and dynamic_update_slice against independent oracles (ONNX Gather/ScatterND,
np.add.at, loops)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, bf16, f32
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.dialects.mir.indexing import OPS
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import build_op, expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(3)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-indexing.mlir"
D = DYNAMIC
TABLE = RNG.standard_normal((5, 4, 3)).astype(np.float32)


def infer(op, shapes, dtypes, **attributes):
    """The result type the builder infers for `op` on inputs of `shapes` and `dtypes`."""
    return build_op(op, shapes, dtypes, **attributes).type


# gather -------------------------------------------------------------------------


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
@pytest.mark.parametrize("ids_shape", [(), (4,), (2, 3)])
def test_gather_matches_onnx(axis, ids_shape):
    """Negative ids count from the end, as ONNX Gather says."""
    ids = RNG.integers(-TABLE.shape[axis], TABLE.shape[axis], ids_shape).astype(np.int64)
    expected = onnx_run("Gather", [TABLE, ids], axis=axis)
    out = run_op("gather", [TABLE, ids], axis=axis)
    assert out.shape == expected.shape
    np.testing.assert_array_equal(out, expected)


def test_gather_float_ids_are_truncated():
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    ids = np.float32([[2.9, 0.0], [1.2, 3.5]])
    out = run_op("gather", [table, ids])
    assert out.shape == (2, 2, 3)
    for i, j in np.ndindex(2, 2):
        np.testing.assert_array_equal(out[i, j], table[int(ids[i, j])])


@pytest.mark.parametrize("ids_dtype", [np.float16, ml_dtypes.bfloat16, np.float64, np.uint8])
def test_gather_accepts_every_float_and_integer_id_dtype(ids_dtype):
    table = np.arange(8, dtype=np.float32).reshape(4, 2)
    ids = np.array([3.75, 1.0, 0.5], np.float32).astype(ids_dtype)
    np.testing.assert_array_equal(run_op("gather", [table, ids]), table[[3, 1, 0]])


def test_gather_on_inner_axis_formula():
    ids = np.int32([3, 0, 3])
    out = run_op("gather", [TABLE, ids], axis=1)
    np.testing.assert_array_equal(out, np.stack([TABLE[:, k, :] for k in ids], axis=1))


def test_gather_keeps_table_dtype():
    table = np.array([[1.5, 2.5], [3.5, 4.5]], ml_dtypes.bfloat16)
    out = run_op("gather", [table, np.int64([1])])
    assert out.dtype == ml_dtypes.bfloat16
    np.testing.assert_array_equal(out.astype(np.float32), [[3.5, 4.5]])


def test_gather_negative_ids_count_from_the_end_as_numpy_take():
    ids = np.array([-1, -5, 4, -3, 0], np.int64)
    np.testing.assert_array_equal(run_op("gather", [TABLE, ids], axis=0), np.take(TABLE, ids, axis=0))
    floats = np.float32([-1.5, -0.5, -4.0])  # truncated toward zero: -1, 0, -4
    np.testing.assert_array_equal(run_op("gather", [TABLE, floats], axis=1), np.take(TABLE, [-1, 0, -4], axis=1))


@pytest.mark.parametrize("bad", [5.0, -6.0, np.nan])
def test_gather_out_of_range_index_is_an_error(bad):
    ids = np.float32([0.0, bad])
    with pytest.raises(KernelError, match=r"'mir.gather' index .* is out of range \[-5, 5\)"):
        run_op("gather", [TABLE, ids])


def test_gather_infers_dynamic_shapes():
    assert infer("gather", [[D, 8], [D, 2]], ["bf16", "f32"], axis=0) == TensorType(bf16, [D, 2, 8])
    assert infer("gather", [[3, D], [4]], ["f32", "i32"], axis=-1) == TensorType(f32, [3, 4])


# scatter_add ------------------------------------------------------------------


def scatter_add_reference(updates, ids, dim_size):
    out = np.zeros((dim_size, *updates.shape[1:]), updates.dtype)
    np.add.at(out, np.trunc(ids).astype(np.int64), updates)
    return out


@pytest.mark.parametrize("ids_dtype", [np.int64, np.int32, np.float32])
def test_scatter_add_matches_add_at(ids_dtype):
    updates = RNG.standard_normal((7, 3, 2)).astype(np.float32)
    ids = np.array([0, 4, -2, 1, -6, 4, -1], ids_dtype)  # np.add.at counts negative ids from the end
    out = run_op("scatter_add", [updates, ids], dim_size=6)
    np.testing.assert_allclose(out, scatter_add_reference(updates, ids, 6), rtol=1e-6)


def test_scatter_add_matches_onnx_scatter_nd_add():
    updates = RNG.standard_normal((6, 4)).astype(np.float32)
    ids = np.int64([2, 0, 2, 2, 5, 0])
    expected = onnx_run(
        "ScatterND", [np.zeros((7, 4), np.float32), ids[:, None], updates], opset=18, reduction="add"
    )
    np.testing.assert_allclose(run_op("scatter_add", [updates, ids], dim_size=7), expected, rtol=1e-6)


def test_scatter_add_small_example():
    updates = np.float32([1, 2, 3, 4])
    ids = np.float32([1, 1, 0, 1.9])
    np.testing.assert_array_equal(run_op("scatter_add", [updates, ids], dim_size=3), [3, 7, 0])


def test_scatter_add_integer_updates_stay_integer():
    updates = np.int32([[1, 2], [3, 4], [5, 6]])
    out = run_op("scatter_add", [updates, np.int64([1, 1, 0])], dim_size=2)
    assert out.dtype == np.int32
    np.testing.assert_array_equal(out, [[5, 6], [4, 6]])


@pytest.mark.parametrize("bad", [3, -4])
def test_scatter_add_out_of_range_index_is_an_error(bad):
    with pytest.raises(KernelError, match=rf"'mir.scatter_add' index {bad} is out of range \[-3, 3\)"):
        run_op("scatter_add", [np.float32([1, 2]), np.int64([0, bad])], dim_size=3)


def test_scatter_add_infers_dynamic_shapes():
    assert infer("scatter_add", [[D, 4], [D]], ["f32", "i64"], dim_size=9) == TensorType(f32, [9, 4])
    assert infer("scatter_add", [[6, D], [D]], ["f32", "f32"], dim_size=2) == TensorType(f32, [2, D])


def test_scatter_add_rejects_mismatched_rows():
    with pytest.raises(
        VerifyException, match=r"'mir.scatter_add' updates \[3, 4\] and indices \[2\] differ in their first dim"
    ):
        infer("scatter_add", [[3, 4], [2]], ["f32", "i64"], dim_size=5)


# dynamic_update_slice -----------------------------------------------------------


def dynamic_update_slice_reference(operand, update, starts):
    """StableHLO's definition, element by element: each start clamped into
    `[0, operand.shape[d] - update.shape[d]]`, then `result[i] = update[i - start]`
    where `i - start` is inside `update`, `operand[i]` elsewhere."""
    at = [min(max(int(s), 0), n - k) for s, n, k in zip(starts, operand.shape, update.shape)]
    out = np.empty_like(operand)
    for i in np.ndindex(*operand.shape):
        j = tuple(a - s for a, s in zip(i, at))
        inside = all(0 <= x < k for x, k in zip(j, update.shape))
        out[i] = update[j] if inside else operand[i]
    return out


@pytest.mark.parametrize(
    "starts", [(0, 0, 0), (2, 1, 3), (1, 4, 0), (-3, 9, -1), (5, 2, 7)], ids=["origin", "inside", "end", "clamped-low-high", "clamped-high"]
)
def test_dynamic_update_slice_matches_the_stablehlo_formula(starts):
    operand = RNG.standard_normal((4, 6, 5)).astype(np.float32)
    update = RNG.standard_normal((2, 2, 5)).astype(np.float32)
    indices = [np.array(s, dt) for s, dt in zip(starts, (np.int32, np.int64, np.int32))]
    out = run_op("dynamic_update_slice", [operand, update, *indices])
    np.testing.assert_array_equal(out, dynamic_update_slice_reference(operand, update, starts))


def test_dynamic_update_slice_clamps_the_start_so_the_update_fits():
    """StableHLO clamps each start into `[0, size - length]`: never an error, the block moves."""
    operand, update = np.zeros(5, np.int32), np.int32([1, 2])
    for start, expected in ((4, [0, 0, 0, 1, 2]), (-3, [1, 2, 0, 0, 0]), (1, [0, 1, 2, 0, 0])):
        out = run_op("dynamic_update_slice", [operand, update, np.array(start, np.int64)])
        assert out.dtype == np.int32
        np.testing.assert_array_equal(out, expected)


def test_dynamic_update_slice_keeps_bf16_and_writes_one_cache_position():
    cache = RNG.standard_normal((1, 2, 8, 4)).astype(ml_dtypes.bfloat16)
    new = RNG.standard_normal((1, 2, 1, 4)).astype(ml_dtypes.bfloat16)
    zero, pos = np.array(0, np.int32), np.array(5, np.int32)
    out = run_op("dynamic_update_slice", [cache, new, zero, zero, pos, zero])
    assert out.dtype == ml_dtypes.bfloat16
    expected = cache.copy()
    expected[:, :, 5] = new[:, :, 0]
    np.testing.assert_array_equal(out, expected)


def test_dynamic_update_slice_infers_the_operand_type():
    shapes, types = [[D, 8], [2, D], [], []], ["bf16", "bf16", "i32", "ui8"]
    assert infer("dynamic_update_slice", shapes, types) == TensorType(bf16, [D, 8])


# Structure --------------------------------------------------------------------


@pytest.mark.parametrize("op", OPS)
def test_indexing_ops_are_pure_data_movement(op):
    assert precision_class(op) is Precision.DATA_MOVEMENT
    assert op.has_trait(Pure)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
