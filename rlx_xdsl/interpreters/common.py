"""Helpers every MIR kernel uses: dtype-faithful results, the accumulation dtype,
constant decoding, and registering plain numpy functions as op kernels."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.interpreter import InterpreterFunctions, impl, register_impls
from xdsl.ir import Operation

from rlx_xdsl import dtypes

_HALF_TYPES = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def result_dtype(op: Operation, index: int = 0) -> np.dtype:
    """The numpy dtype of the op's `index`-th result."""
    t = op.results[index].type
    assert isinstance(t, TensorType)
    return dtypes.numpy_dtype(t.element_type)


def as_result(op: Operation, value: Any, index: int = 0) -> np.ndarray:
    """`value` as an ndarray in the dtype of result `index` (computing in op dtype)."""
    return np.asarray(value).astype(result_dtype(op, index), copy=False)


def compute_dtype(*arrays: np.ndarray) -> np.dtype:
    """The numpy dtype RLX promotion gives for the arrays' dtypes."""
    element = dtypes.promote_all(*(dtypes.dtype_of_numpy(a.dtype).element_type for a in arrays))
    return dtypes.numpy_dtype(element)


def promoted(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays converted to their common `compute_dtype`, as binary ops combine them."""
    dt = compute_dtype(*arrays)
    return tuple(a.astype(dt, copy=False) for a in arrays)


def accumulation_dtype(dtype: np.dtype) -> np.dtype:
    """The dtype a reduction over `dtype` accumulates in: f32 for halves, else itself.

    Summing thousands of f16/bf16 values in half precision would lose most of
    their bits; GPU kernels accumulate them in f32 and round the result back.
    """
    return np.dtype(np.float32) if np.dtype(dtype) in _HALF_TYPES else np.dtype(dtype)


def widened(x: np.ndarray) -> np.ndarray:
    """`x` in its accumulation dtype."""
    return x.astype(accumulation_dtype(x.dtype), copy=False)


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """Decode a dense attribute into an ndarray of its element type."""
    np_dtype = dtypes.numpy_dtype(attr.get_element_type())
    shape = attr.get_shape()
    values = attr.get_values()
    if np_dtype.kind == "c":
        values = [complex(re, im) for re, im in values]
    array = np.array(values, dtype=np_dtype if np_dtype.kind != "V" else np.float32)
    return array.astype(np_dtype).reshape(shape)


def numpy_to_dense(array: np.ndarray, element_type=None) -> DenseIntOrFPElementsAttr:
    """Build a dense attribute holding `array` (in `element_type`, default its own)."""
    array = np.asarray(array)
    if element_type is None:
        element_type = dtypes.dtype_of_numpy(array.dtype).element_type
    t = TensorType(element_type, array.shape)
    flat = array.reshape(-1)
    if np.iscomplexobj(flat):
        values = [(float(z.real), float(z.imag)) for z in flat]
    elif dtypes.is_float(element_type):
        values = [float(v) for v in flat]
    else:
        values = [int(v) for v in flat]
    return DenseIntOrFPElementsAttr.from_list(t, values)


Kernel = Callable[..., np.ndarray]
"""`kernel(op, *operand_arrays)` -> the op's only result."""


def kernel_functions(name: str, kernels: Mapping[type[Operation], Kernel]) -> type[InterpreterFunctions]:
    """An `InterpreterFunctions` class running `kernels[type(op)](op, *args)` for each op.

    Most MIR semantics are one numpy function per op (or per op family: the
    binary ops, the activations); this registers them without a hand-written
    `@impl` method each. xDSL dispatches on the exact op class, so a family
    maps each of its classes to the shared kernel.
    """
    methods = {}
    for op_type, kernel in kernels.items():

        def run(self, interp, op, args, _kernel=kernel):
            return (_kernel(op, *args),)

        methods["run_" + op_type.name.replace(".", "_")] = impl(op_type)(run)
    return register_impls(type(name, (InterpreterFunctions,), methods))
