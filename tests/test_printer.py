"""Printing then parsing preserves every constant bit for bit, in both syntaxes.

Checked on random bit patterns of every float dtype (NaN payloads, signalling NaNs,
-0.0, subnormals, extremes) and on random graphs whose constants are filled with
such values, which must also compute bit-identical outputs after the round trip.
"""

from __future__ import annotations

import io

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from xdsl.dialects.builtin import (
    ComplexType,
    DenseIntOrFPElementsAttr,
    IndexType,
    TensorType,
    f32,
    i1,
    i8,
    i64,
)

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context
from rlx_xdsl.dialects.mir.elementwise import ConstantOp
from rlx_xdsl.ir.dense import dense_to_numpy, numpy_to_dense
from rlx_xdsl.ir.parser import RlxParser
from rlx_xdsl.ir.printer import RlxPrinter, print_ir
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for

CTX = make_context()
UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
FLOATS = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float64)]

SPECIAL_BITS = {
    np.dtype(np.float32): [0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FBFFFFF, 0x7F800000, 0xFF800000, 0x80000000, 0x00000001, 0x807FFFFF, 0x7F7FFFFF],
    np.dtype(np.float16): [0x7E00, 0xFE00, 0x7C01, 0x7E01, 0x7C00, 0xFC00, 0x8000, 0x0001, 0x83FF, 0x7BFF],
    np.dtype(ml_dtypes.bfloat16): [0x7FC0, 0xFFC0, 0x7F81, 0x7FC1, 0x7F80, 0xFF80, 0x8000, 0x0001, 0x807F, 0x7F7F],
    np.dtype(np.float64): [0x7FF8000000000000, 0x7FF0000000000001, 0xFFF0000000000000, 0x8000000000000000, 1, 0x7FEFFFFFFFFFFFFF],
}
"""NaNs (quiet, signalling, with payloads, negative), ±inf, -0.0, subnormals, the largest value."""


def round_trip(module, generic: bool):
    return parse_source(CTX, print_ir(module, print_generic_format=generic), "t.mlir")[0]


def constants(module) -> list[np.ndarray]:
    return [np.ascontiguousarray(dense_to_numpy(op.value)) for op in module.walk() if isinstance(op, ConstantOp)]


def bits(array: np.ndarray) -> np.ndarray:
    return np.ascontiguousarray(array).reshape(-1).view(UINT[array.dtype.itemsize] if array.dtype.kind != "c" else np.uint32)


@pytest.mark.parametrize("generic", [False, True], ids=["custom", "generic"])
@pytest.mark.parametrize("dtype", FLOATS, ids=str)
@pytest.mark.parametrize("count", [1, 7, 101])
def test_random_bit_patterns_survive_print_and_parse(dtype, count, generic):
    rng = np.random.default_rng(count)
    unsigned = UINT[dtype.itemsize]
    pattern = rng.integers(0, np.iinfo(unsigned).max, size=count, dtype=unsigned, endpoint=True)
    pattern[: len(SPECIAL_BITS[dtype])] = SPECIAL_BITS[dtype][:count]
    b = GraphBuilder("f")
    b.output(b.mir.constant(pattern.view(dtype), dtypes.dtype_of_numpy(dtype).element_type))
    (back,) = constants(round_trip(b.module(), generic))
    assert bits(back).tolist() == pattern.tolist()


@pytest.mark.parametrize("dtype", FLOATS, ids=str)
def test_a_nan_splat_prints_as_one_hex_element(dtype):
    b = GraphBuilder("f")
    nan = np.array([SPECIAL_BITS[dtype][0]] * 6, UINT[dtype.itemsize]).view(dtype)
    b.output(b.mir.constant(nan.reshape(2, 3), dtypes.dtype_of_numpy(dtype).element_type))
    text = print_ir(b.module())
    assert f"dense<0x{SPECIAL_BITS[dtype][0]:0{dtype.itemsize * 2}X}> : tensor<2x3x" in text


STORED_IN_FULL = [
    DenseIntOrFPElementsAttr.from_list(TensorType(i64, [2]), [1, 1]),  # linalg.conv's strides
    DenseIntOrFPElementsAttr.from_list(TensorType(IndexType(), [2, 2]), [3, 3, 3, 3]),
    DenseIntOrFPElementsAttr.from_list(TensorType(i1, [3]), [1, 1, 1]),
    DenseIntOrFPElementsAttr.from_list(TensorType(i8, [101]), [-1] * 101),
    DenseIntOrFPElementsAttr.from_list(TensorType(f32, [3]), [0.5, 0.5, 0.5]),
    DenseIntOrFPElementsAttr.from_list(TensorType(i64, [3]), [1, 2, 3]),
]
STORED_ONCE = [
    numpy_to_dense(np.ones((2, 3), np.int64)),
    numpy_to_dense(np.full(200, np.nan, np.float32)),
    numpy_to_dense(np.array([True, True])),
]


@pytest.mark.parametrize("attr", STORED_IN_FULL + STORED_ONCE, ids=str)
def test_a_dense_attribute_reads_back_stored_as_it_was(attr):
    """A splat prints as one element only when one is stored: xDSL's verifiers read the
    stored elements, and the parser stores a one-element text once."""
    stream = io.StringIO()
    RlxPrinter(stream=stream).print_attribute(attr)
    assert RlxParser(CTX, stream.getvalue()).parse_attribute() == attr


def test_complex_constants_survive_print_and_parse():
    values = np.array([complex(np.nan, -0.0), complex(np.inf, 1e-45), complex(-1.5, 3.4e38)], np.complex64)
    b = GraphBuilder("f")
    b.output(b.mir.constant(values, ComplexType(f32)))
    (back,) = constants(round_trip(b.module(), False))
    assert bits(back).tolist() == bits(values).tolist()


def special_values(shape, dtype: np.dtype, rng: np.random.Generator) -> np.ndarray:
    """An array mixing special bit patterns with random finite values (floats only)."""
    size = int(np.prod(shape))
    values = rng.standard_normal(size).astype(dtype)
    picks = rng.integers(0, len(SPECIAL_BITS[dtype]), size=size)
    special = np.array(SPECIAL_BITS[dtype], UINT[dtype.itemsize])[picks].view(dtype)
    return np.where(rng.random(size) < 0.5, special, values).reshape(shape)


def fill_constants(module, seed: int) -> None:
    """Replace every float constant's value with special values of the same type."""
    rng = np.random.default_rng(seed)
    for op in list(module.walk()):
        if isinstance(op, ConstantOp):
            element = op.value.get_element_type()
            if dtypes.is_supported(element) and dtypes.is_float(element):
                dt = dtypes.numpy_dtype(element)
                op.properties["value"] = numpy_to_dense(special_values(op.value.get_shape(), dt, rng), element)


@settings(max_examples=30, deadline=None)
@given(module=graphs(max_ops=8), seed=st.integers(0, 2**16), generic=st.booleans())
def test_random_graphs_with_special_constants_round_trip_and_compute_the_same(module, seed, generic):
    fill_constants(module, seed)
    back = round_trip(module, generic)
    assert [bits(c).tolist() for c in constants(back)] == [bits(c).tolist() for c in constants(module)]
    inputs = inputs_for(module, seed)
    before, after = outcome(module, inputs), outcome(back, inputs)
    if isinstance(before, str):  # e.g. a special value used as an index: the same error
        assert after == before
        return
    for b, a in zip(before, after):
        assert b.dtype == a.dtype
        assert bits(b).tolist() == bits(a).tolist()


def outcome(module, inputs) -> list[np.ndarray] | str:
    """The function's outputs, or the message of the run-time error it stops with."""
    try:
        return run_function(module, None, inputs)
    except KernelError as e:
        return e.message
