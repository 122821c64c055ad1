"""The shared dtype-promotion and broadcasting helpers."""

import numpy as np
import pytest
from xdsl.dialects.builtin import bf16, f16, f32, f64, i1, i8, i16, i32, i64

from rlx_xdsl import dtypes
from rlx_xdsl.dtypes import c64, i4, promote, ui4, ui8, ui16, ui32, ui64
from rlx_xdsl.shapes import DYNAMIC, ShapeError, broadcast_axes, broadcast_shapes

ALL = [d.element_type for d in dtypes.DTYPES]


def test_dtypes_with_numpy_twins():
    assert {d.name for d in dtypes.DTYPES} == {
        "f32", "f16", "bf16", "f64", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16", "ui32", "ui64",
        "i2", "ui2", "i4", "ui4", "f8E4M3FN", "f8E4M3FNUZ", "f8E5M2", "f8E5M2FNUZ", "f4E2M1FN", "complex<f32>",
    }  # fmt: skip
    assert dtypes.numpy_dtype(bf16).name == "bfloat16"
    assert dtypes.dtype_named("f8E4M3FN").numpy.name == "float8_e4m3fn"
    assert dtypes.dtype_named("i4").numpy.name == "int4"
    assert dtypes.dtype_of(c64).nbytes == 8


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (f16, bf16, f32),  # RLX: f16 + bf16 -> f32
        (f16, f32, f32),
        (f32, f64, f64),
        (i64, f32, f64),  # RLX: I64 -> F64
        (i8, bf16, bf16),  # bf16 holds every i8 exactly
        (i16, f16, f32),  # f16 does not hold every i16
        (i32, f32, f64),
        (ui8, i8, i16),
        (ui32, i32, i64),
        (i1, i8, i8),
        (i1, f16, f16),
        (i16, ui32, i64),
        (c64, f64, c64),
        (ui16, i16, i32),
        (ui64, i64, f64),  # no integer type holds both: numpy's and JAX's f64
        (i4, i8, i8),
        (i4, ui4, i8),
        (ui4, ui8, ui8),
        (dtypes.dtype_named("f8E4M3FN").element_type, dtypes.dtype_named("f8E5M2").element_type, bf16),
        (dtypes.dtype_named("f8E4M3FN").element_type, f16, f16),
        (dtypes.dtype_named("f4E2M1FN").element_type, i8, f16),
    ],
)
def test_promotion_table(a, b, expected):
    assert promote(a, b) == expected
    assert promote(b, a) == expected


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("b", ALL)
def test_promotion_is_symmetric_and_never_narrows(a, b):
    r = promote(a, b)
    assert r == promote(b, a)
    rank = dtypes.dtype_of(r).rank
    assert rank >= dtypes.dtype_of(a).rank and rank >= dtypes.dtype_of(b).rank


@pytest.mark.parametrize("a", ALL)
@pytest.mark.parametrize("b", ALL)
def test_promotion_agrees_with_numpy_where_numpy_has_both(a, b):
    """numpy's result_type is an independent oracle for the pairs of numpy's own types."""
    if not all(hasattr(np, dtypes.dtype_of(t).numpy_name) for t in (a, b)):  # an ml_dtypes type
        return
    expected = np.result_type(dtypes.numpy_dtype(a), dtypes.numpy_dtype(b))
    if expected == np.complex128:  # numpy widens complex64 + f64; RLX keeps C64
        expected = np.dtype(np.complex64)
    assert dtypes.numpy_dtype(promote(a, b)) == expected


def test_broadcast_matches_numpy():
    for s1, s2 in [((2, 1, 4), (3, 1)), ((), (5,)), ((1,), (2, 3)), ((4, 1), (1, 5))]:
        assert broadcast_shapes(s1, s2) == np.broadcast_shapes(s1, s2)


def test_broadcast_dynamic_dims():
    assert broadcast_shapes((DYNAMIC, 4), (4,)) == (DYNAMIC, 4)
    assert broadcast_shapes((DYNAMIC, 1), (1, 5)) == (DYNAMIC, 5)
    assert broadcast_shapes((DYNAMIC,), (3,)) == (3,)
    assert broadcast_shapes((DYNAMIC,), (1,)) == (DYNAMIC,)


def test_broadcast_error_names_shapes():
    with pytest.raises(ShapeError, match=r"shapes \[2, 3\], \[\?, 4\] do not broadcast"):
        broadcast_shapes((2, 3), (DYNAMIC, 4))


def test_broadcast_axes_undo_numpy_broadcast():
    x = np.ones((3, 1))
    g = np.ones((2, 3, 4))
    axes = broadcast_axes(x.shape, g.shape)
    assert axes == (0, 2)
    # Summing the broadcast result over those axes recovers x's shape, each cell counted 2*4 times.
    np.testing.assert_array_equal(g.sum(axis=axes, keepdims=True).reshape(x.shape), np.full((3, 1), 8.0))


def test_element_sizes_match_numpy_without_loading_it():
    for d in dtypes.DTYPES:
        assert d.nbytes == d.numpy.itemsize, d.name
