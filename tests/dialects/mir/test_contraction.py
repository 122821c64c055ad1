"""Linear-algebra MIR ops against independent oracles (ONNX MatMul, np.einsum, A @ x == b)."""

from pathlib import Path

import ml_dtypes
import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, bf16, f32, i64
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.contraction import DenseSolveOp, DotGeneralOp, MatmulOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test
from rlx_xdsl.testing.oracles import onnx_run, run_op

RNG = np.random.default_rng(11)
INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-contraction.mlir"
D = DYNAMIC


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# matmul ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [((3, 4), (4, 5)), ((2, 3, 4), (4, 5)), ((2, 1, 3, 4), (5, 4, 2)), ((1, 4), (3, 4, 1))],
)
def test_matmul_matches_onnx(a_shape, b_shape):
    a, b = rand(*a_shape), rand(*b_shape)
    np.testing.assert_allclose(run_op("matmul", [a, b]), onnx_run("MatMul", [a, b]), rtol=1e-5, atol=1e-5)


def test_matmul_matches_sum_of_products():
    a, b = rand(2, 3, 4), rand(2, 4, 5)
    expected = np.zeros((2, 3, 5))
    for n in range(2):
        for i in range(3):
            for j in range(5):
                expected[n, i, j] = sum(float(a[n, i, k]) * float(b[n, k, j]) for k in range(4))
    np.testing.assert_allclose(run_op("matmul", [a, b]), expected, rtol=1e-5, atol=1e-5)


def test_matmul_promotes_and_keeps_integers_exact():
    a = np.array([[1, 2], [3, 4]], np.int32)
    b = np.array([[5, 6], [7, 8]], np.int64)
    out = run_op("matmul", [a, b])
    assert out.dtype == np.int64
    np.testing.assert_array_equal(out, [[19, 22], [43, 50]])


def test_matmul_bf16_result_is_bf16():
    a = rand(2, 3, dtype=ml_dtypes.bfloat16)
    b = rand(3, 2, dtype=ml_dtypes.bfloat16)
    out = run_op("matmul", [a, b])
    assert out.dtype == ml_dtypes.bfloat16
    expected = (a.astype(np.float32) @ b.astype(np.float32)).astype(ml_dtypes.bfloat16)
    np.testing.assert_array_equal(out.astype(np.float32), expected.astype(np.float32))


@pytest.mark.parametrize(
    ("a_shape", "b_shape", "expected"),
    [
        ([D, 4], [4, D], [D, D]),
        ([D, 3, 4], [1, 4, 5], [D, 3, 5]),
        ([2, 3, D], [D, 5], [2, 3, 5]),
        ([D, 1, 3, 4], [6, 4, 2], [D, 6, 3, 2]),
    ],
)
def test_matmul_infers_dynamic_shapes(a_shape, b_shape, expected):
    b = GraphBuilder()
    out = b.matmul(b.input("a", a_shape), b.input("b", b_shape, bf16))
    assert out.type == TensorType(f32, expected)


# dot_general ------------------------------------------------------------------

DOT_GENERAL_CASES = {
    # name: (lhs shape, rhs shape, dims, einsum spec)
    "matmul": ((3, 4), (4, 5), ([1], [0], [], []), "ik,kj->ij"),
    "batched": ((2, 3, 4), (2, 4, 5), ([2], [1], [0], [0]), "bik,bkj->bij"),
    "transposed_operands": ((4, 3), (5, 4), ([0], [1], [], []), "ki,jk->ij"),
    "two_contractions": ((2, 3, 4), (4, 5, 3), ([1, 2], [2, 0], [], []), "xkl,lyk->xy"),
    "batch_not_leading": ((3, 2, 4), (4, 6, 2), ([2], [0], [1], [2]), "ibk,kjb->bij"),
    "outer_product": ((3,), (4,), ([], [], [], []), "i,j->ij"),
    "two_batch_dims": ((2, 3, 4, 5), (3, 2, 5), ([3], [2], [0, 1], [1, 0]), "abik,bak->abi"),
}


@pytest.mark.parametrize("case", sorted(DOT_GENERAL_CASES))
def test_dot_general_matches_einsum(case):
    a_shape, b_shape, (lc, rc, lb, rb), spec = DOT_GENERAL_CASES[case]
    a, b = rand(*a_shape), rand(*b_shape)
    out = run_op(
        "dot_general", [a, b], lhs_contracting=lc, rhs_contracting=rc, lhs_batch=lb, rhs_batch=rb
    )
    np.testing.assert_allclose(out, np.einsum(spec, a.astype(np.float64), b), rtol=1e-5, atol=1e-5)


def test_dot_general_infers_dynamic_batch_from_either_side():
    b = GraphBuilder()
    x = b.input("x", [D, 3, 4])
    y = b.input("y", [2, 4, D], "f16")
    out = b.dot_general(x, y, lhs_contracting=[2], rhs_contracting=[1], lhs_batch=[0], rhs_batch=[0])
    assert out.type == TensorType(f32, [2, 3, D])


def test_dot_general_rejects_repeated_rhs_axis():
    b = GraphBuilder()
    x, y = b.input("x", [4, 4]), b.input("y", [4, 4])
    with pytest.raises(VerifyException, match="'mir.dot_general' rhs batch and contracting axes repeat an axis"):
        b.dot_general(x, y, lhs_contracting=[1], rhs_contracting=[0], lhs_batch=[0], rhs_batch=[0])


def test_dot_general_rejects_negative_axis():
    b = GraphBuilder()
    x, y = b.input("x", [3, 4]), b.input("y", [4, 5])
    with pytest.raises(VerifyException, match="'mir.dot_general' lhs axis -1 is out of range for rank 2"):
        b.dot_general(x, y, lhs_contracting=[-1], rhs_contracting=[0])


# dense_solve ------------------------------------------------------------------


def well_conditioned(n, dtype=np.float32):
    return (rand(n, n) + n * np.eye(n)).astype(dtype)


@pytest.mark.parametrize("rhs_shape", [(4,), (4, 3)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dense_solve_satisfies_the_system(rhs_shape, dtype):
    a, rhs = well_conditioned(4, dtype), rand(*rhs_shape, dtype=dtype)
    x = run_op("dense_solve", [a, rhs])
    assert x.dtype == dtype and x.shape == rhs_shape
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(a.astype(np.float64) @ x, rhs, rtol=tol, atol=tol)


def test_dense_solve_known_solution():
    a = np.array([[2.0, 1.0], [1.0, 3.0]], np.float64)
    rhs = np.array([3.0, 5.0])  # x = (0.8, 1.4)
    np.testing.assert_allclose(run_op("dense_solve", [a, rhs]), [0.8, 1.4], rtol=1e-12)


def test_dense_solve_half_precision_result_is_f16():
    a, rhs = well_conditioned(3, np.float16), rand(3, dtype=np.float16)
    x = run_op("dense_solve", [a, rhs])
    assert x.dtype == np.float16
    np.testing.assert_allclose(a.astype(np.float64) @ x, rhs, rtol=2e-2, atol=2e-2)


def test_dense_solve_singular_matrix_is_an_error():
    a = np.array([[1.0, 2.0], [2.0, 4.0]], np.float32)
    with pytest.raises(KernelError, match="'mir.dense_solve' matrix is singular"):
        run_op("dense_solve", [a, np.ones(2, np.float32)])


def test_dense_solve_takes_n_from_the_matrix():
    b = GraphBuilder()
    out = b.dense_solve(b.input("a", [D, 5]), b.input("b", [D, 2]))
    assert out.type == TensorType(f32, [5, 2])


# Structure --------------------------------------------------------------------


@pytest.mark.parametrize("op", [MatmulOp, DotGeneralOp, DenseSolveOp])
def test_linalg_ops_are_pure_compute(op):
    assert precision_class(op) is Precision.COMPUTE
    assert op.has_trait(Pure)


def test_matmul_rejects_mismatched_contraction():
    b = GraphBuilder()
    x, y = b.input("x", [3, 5]), b.input("y", [4, 2], i64)
    with pytest.raises(VerifyException, match="'mir.matmul' contraction dims 5 and 4 differ"):
        b.matmul(x, y)


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)


# batched_dense_solve -----------------------------------------------------------


def batched_system(batch, n, *k):
    a = RNG.standard_normal((batch, n, n)).astype(np.float32) + n * np.eye(n, dtype=np.float32)
    return a, RNG.standard_normal((batch, n, *k)).astype(np.float32)


@pytest.mark.parametrize("k", [(), (2,)])
def test_batched_dense_solve_matches_torch(k):
    import torch

    a, rhs = batched_system(3, 4, *k)
    out = run_op("batched_dense_solve", [a, rhs])
    assert out.shape == rhs.shape and out.dtype == np.float32
    np.testing.assert_allclose(out, torch.linalg.solve(torch.from_numpy(a), torch.from_numpy(rhs)).numpy(),
                               rtol=1e-5, atol=1e-5)  # fmt: skip


def test_batched_dense_solve_singular_system_is_a_kernel_error():
    a, rhs = batched_system(2, 2)
    a[1] = 0
    with pytest.raises(KernelError, match="singular"):
        run_op("batched_dense_solve", [a, rhs])


@pytest.mark.parametrize("k", [(), (2,)])
def test_batched_dense_solve_gradients_match_torch_with_a_dynamic_batch(k):
    """rlx-grad's rule on a `?` batch (where RLX's rule panics) against torch's autograd."""
    import torch

    from rlx_xdsl.autodiff.grad import build_gradient
    from rlx_xdsl.run import run_function

    a, rhs = batched_system(3, 4, *k)
    g = RNG.standard_normal(rhs.shape).astype(np.float32)
    b = GraphBuilder("f")
    pa, pb = b.param("a", [DYNAMIC, 4, 4]), b.param("b", [DYNAMIC, 4, *k])
    b.output(b.batched_dense_solve(pa, pb))
    module = b.module()
    build_gradient(module, "f")
    _, da, db = run_function(module, "f_grad", [a, rhs, g])
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(rhs, requires_grad=True)
    torch.linalg.solve(ta, tb).backward(torch.from_numpy(g))
    np.testing.assert_allclose(da, ta.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(db, tb.grad.numpy(), rtol=1e-4, atol=1e-5)


def test_batched_dense_solve_is_a_compute_op():
    from rlx_xdsl.dialects.mir.contraction import BatchedDenseSolveOp

    assert precision_class(BatchedDenseSolveOp) is Precision.COMPUTE
