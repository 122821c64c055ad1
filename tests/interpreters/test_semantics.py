"""The interpreter's numeric decisions, op by op, against formulas written here.

Each test pins one class of defect the hardening issue found (rounding, integer
arithmetic through floats, half-precision accumulation, non-finite inputs, casts),
with inputs chosen so the old behaviour gives a visibly different answer.
"""

from __future__ import annotations

import math
import warnings

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import bf16, i32, i64

from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.oracles import run_op
from rlx_xdsl.tools import rlx_run

BF16 = ml_dtypes.bfloat16


@pytest.fixture(autouse=True)
def numpy_warnings_are_errors():
    """No kernel may leak a numpy warning (they would reach the user's stderr)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


# Rounding -----------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_round_is_exact_half_away_from_zero(dtype):
    x = np.array([0.49999997, 8388609.0, 16777215.0, 0.5, -0.5, 1.5, -2.5, -0.4], dtype)
    got = run_op("round", [x])
    assert got.tolist() == [0.0, 8388609.0, 16777215.0, 1.0, -1.0, 2.0, -3.0, -0.0]
    assert math.copysign(1, got[-1]) == -1


@pytest.mark.parametrize("dtype", [BF16, np.float16])
def test_round_halves_round_away_in_half_precision(dtype):
    x = np.array([0.5, 2.5, -3.5, 255.0, 0.4921875], dtype)
    assert run_op("round", [x]).astype(np.float32).tolist() == [1.0, 3.0, -4.0, 255.0, 0.0]


# Integer arithmetic -------------------------------------------------------------------------


def test_i64_div_is_exact_above_2_pow_53():
    a = np.array([2**62 + 1, 9007199254740993, -(2**63)], np.int64)
    b = np.array([1, 3, 7], np.int64)
    assert run_op("div", [a, b]).tolist() == [2**62 + 1, 9007199254740993 // 3, -(2**63 // 7)]


def test_integer_division_by_zero_names_the_op():
    with pytest.raises(KernelError, match="^'mir.div' integer division by zero$"):
        run_op("div", [np.array([7], np.int32), np.array([0], np.int32)])


def test_integer_pow_with_negative_exponent_names_the_op():
    with pytest.raises(KernelError, match=r"^'mir.pow' integer power with a negative exponent \(-2\)$"):
        run_op("pow", [np.array([2], np.int64), np.array([-2], np.int64)])


def test_integer_reductions_and_scans_stay_in_integers():
    big = np.array([2**53 + 1, 2**53 + 3], np.int64)
    assert int(run_op("reduce", [big], kind="sum", axes=[0])) == 2**54 + 4
    assert int(run_op("reduce", [big], kind="mean", axes=[0])) == 2**53 + 2
    assert run_op("cumsum", [big], axis=0).tolist() == [2**53 + 1, 2**54 + 4]
    assert int(run_op("reduce", [np.array([-7, 0], np.int32)], kind="mean", axes=[0])) == -3


def test_integer_mean_of_i8_does_not_wrap():
    assert int(run_op("reduce", [np.array([100, 100, 101], np.int8)], kind="mean", axes=[0])) == 100


def test_bool_arithmetic_computes_on_zero_and_one():
    t, f = np.array([True, False]), np.array([True, True])
    assert run_op("sub", [t, f]).tolist() == [False, True]
    assert run_op("neg", [t]).tolist() == [True, False]


# Half-precision accumulation ------------------------------------------------------------------


def test_reduce_cumsum_softmax_of_many_halves():
    ones = np.ones(4096, BF16)
    assert float(run_op("reduce", [ones], kind="sum", axes=[0])) == 4096.0
    assert float(run_op("cumsum", [np.ones(4096, np.float16)], axis=0)[-1]) == 4096.0
    assert float(run_op("softmax", [np.zeros(4096, BF16)])[0]) == 2.0**-12


def test_matmul_and_conv_of_many_halves():
    ones = np.ones((1, 4096), np.float16)
    assert float(run_op("matmul", [ones, ones.T])[0, 0]) == 4096.0
    x, w = np.ones((1, 1024, 2, 2), BF16), np.ones((1, 1024, 2, 2), BF16)
    assert float(run_op("conv", [x, w], kernel_size=[2, 2])[0, 0, 0, 0]) == 4096.0


def test_attention_over_1024_keys_of_ones_is_one():
    q = np.ones((1, 1, 1, 8), BF16)
    kv = np.ones((1, 1, 1024, 8), BF16)
    out = run_op("attention", [q, kv, kv], num_heads=1, head_dim=8)
    assert out.astype(np.float32).tolist() == [[[[1.0] * 8]]]


def test_mean_pool_and_scatter_add_of_many_halves():
    x = np.ones((1, 1, 64, 64), BF16)
    assert float(run_op("pool", [x], kind="mean", kernel_size=[64, 64])[0, 0, 0, 0]) == 1.0
    updates = np.ones((4096, 2), BF16)
    out = run_op("scatter_add", [updates, np.zeros(4096, np.int64)], dim_size=1)
    assert out.astype(np.float32).tolist() == [[4096.0, 4096.0]]


def test_cross_entropy_of_many_half_classes():
    logits = np.zeros((1, 4096), BF16)
    loss = run_op("softmax_cross_entropy_with_logits", [logits, np.zeros(1, np.int64)])
    assert float(loss[0]) == float(np.float32(math.log(4096)).astype(BF16))


# Non-finite inputs ------------------------------------------------------------------------------


def test_cross_entropy_ignores_minus_inf_logits_of_other_classes():
    logits = np.array([[2.0, -np.inf, 0.5]], np.float32)
    want = math.log(math.exp(2.0) + math.exp(0.5)) - 2.0
    got = run_op("softmax_cross_entropy_with_logits", [logits, np.array([0], np.int64)])
    assert got[0] == pytest.approx(want, rel=1e-6)
    dense = run_op("softmax_cross_entropy", [logits, np.array([[1.0, 0.0, 0.0]], np.float32)])
    assert dense[0] == pytest.approx(want, rel=1e-6)


def test_softmax_of_an_all_minus_inf_row_is_nan_and_attention_gives_zeros():
    assert np.isnan(run_op("softmax", [np.full((1, 3), -np.inf, np.float32)])).all()
    q = np.ones((1, 1, 1, 2), np.float32)
    kv = np.ones((1, 1, 2, 2), np.float32)
    masked = run_op("attention", [q, kv, kv, np.zeros((1, 2), np.float32)], num_heads=1, head_dim=2, mask_kind="custom")
    assert masked.tolist() == [[[[0.0, 0.0]]]]


def test_nan_in_max_min_topk_where_and_casts():
    x = np.array([1.0, np.nan, 3.0], np.float32)
    assert np.isnan(run_op("reduce", [x], kind="max", axes=[0]))
    assert np.isnan(run_op("max", [x, np.zeros(3, np.float32)])[1])
    values, indices = run_op("topk", [x], k=2)
    assert indices.tolist() == [1, 2] and np.isnan(values[0])
    assert run_op("where", [x, np.ones(3, np.float32), np.zeros(3, np.float32)]).tolist() == [1.0, 1.0, 1.0]
    ints = run_op("cast", [np.array([np.nan, np.inf, -np.inf, 3e9, -2.7], np.float32)], to=i32)
    assert ints.tolist() == [0, 2**31 - 1, -(2**31), 2**31 - 1, -2]


def test_max_of_zero_elements_is_an_error():
    with pytest.raises(KernelError, match=r"^'mir.reduce' max over zero elements"):
        run_op("reduce", [np.zeros((0, 2), np.float32)], kind="max", axes=[0])


# Casts ----------------------------------------------------------------------------------------


def test_cast_to_bf16_rounds_once():
    x = np.array([1 + 2**-8 + 2**-30, -(1 + 2**-8 + 2**-30)], np.float64)
    assert run_op("cast", [x], to=bf16).astype(np.float64).tolist() == [1 + 2**-7, -(1 + 2**-7)]
    n = np.array([2**60 + 2**52 + 1], np.int64)
    assert run_op("cast", [n], to=bf16).astype(np.float64).tolist() == [2.0**60 + 2**53]


def test_cast_to_i64_saturates():
    x = np.array([1e30, -1e30, np.nan], np.float64)
    assert run_op("cast", [x], to=i64).tolist() == [2**63 - 1, -(2**63), 0]


# No numpy warning escapes a kernel ----------------------------------------------------------------


def special_inputs(module, seed: int) -> list[np.ndarray]:
    """Random inputs with NaN, ±inf, -0.0 and huge values mixed into every float argument."""
    rng = np.random.default_rng(seed)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0, 3e38, -3e38, 1e-45])
    out = []
    for x in inputs_for(module, seed):
        if x.dtype.kind == "f" or x.dtype == np.dtype(BF16):
            mask = rng.random(x.shape) < 0.3
            x = np.where(mask, specials[rng.integers(0, len(specials), x.shape)], x.astype(np.float64)).astype(x.dtype)
        out.append(x)
    return out


@settings(max_examples=40, deadline=None)
@given(module=graphs(max_ops=10), seed=st.integers(0, 2**16))
def test_random_graphs_on_non_finite_inputs_never_warn(module, seed):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            run_function(module, None, special_inputs(module, seed))
        except KernelError:
            pass  # e.g. NaN used as an index: a clear error is allowed, a warning is not
    assert [str(w.message) for w in caught] == []


def test_rlx_run_prints_no_warning_on_non_finite_inputs(tmp_path, capfd):
    path = tmp_path / "f.mlir"
    path.write_text(
        "func.func @f(%x: tensor<4xf32> {rlx.name = \"x\"}) -> tensor<4xf32> {\n"
        "  %e = mir.exp %x : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  %s = mir.softmax %e axis = -1 : (tensor<4xf32>) -> tensor<4xf32>\n"
        "  %d = mir.div %s, %x : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>\n"
        "  func.return %d : tensor<4xf32>\n}\n"
    )
    np.save(tmp_path / "x.npy", np.array([np.nan, np.inf, 0.0, 1e30], np.float32))
    assert rlx_run.main([str(path), "--input", f"x={tmp_path / 'x.npy'}"]) == 0
    out, err = capfd.readouterr()
    assert err == "" and "non-finite: 4 of 4" in out
