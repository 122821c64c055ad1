"""Helpers every MIR kernel uses: dtype-faithful results and constant decoding."""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Operation

from rlx_xdsl import dtypes


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


def add_impls(functions: type, op_types, kernel_name: str) -> None:
    """Register one shared kernel method for several op classes.

    xDSL dispatches on the exact op class, so a family of ops (the binary ops,
    the activations) needs one `@impl` per class; call this before
    `register_impls(functions)`.
    """
    from xdsl.interpreter import impl

    for op_type in op_types:

        def run(self, interp, op, args, _name=kernel_name):
            return getattr(self, _name)(interp, op, args)

        setattr(functions, "run_" + op_type.name.replace(".", "_"), impl(op_type)(run))
