"""numpy arrays <-> builtin `dense<...>` attributes, through their bytes.

xDSL stores a `DenseIntOrFPElementsAttr` as raw little-endian bytes in the
element type's layout, which for RLX's dtypes is numpy's own layout except for
`i1` (one byte per element, true stored as 0xFF). Converting through the buffer
costs O(bytes) in numpy instead of a Python object per element.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute

from rlx_xdsl import dtypes


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The attribute's values as a read-only ndarray of its element type and shape.

    A splat (one stored element for a larger shape) is broadcast, not copied.
    """
    dt = dtypes.dtype_of(attr.get_element_type())
    shape = attr.get_shape()
    raw = np.frombuffer(attr.data.data, dtype=np.int8 if dt.kind == "bool" else dt.numpy.newbyteorder("<"))
    if dt.kind == "bool":
        raw = raw != 0
    elif raw.dtype != dt.numpy:
        raw = raw.astype(dt.numpy)
    if raw.size == 1 and math.prod(shape) != 1:
        return np.broadcast_to(raw.reshape(()), shape)
    return raw.reshape(shape)


def numpy_to_dense(array: np.ndarray, element_type: Attribute | None = None) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding `array`, converted to `element_type` (default: its own dtype)."""
    array = np.asarray(array)
    dt = dtypes.dtype_of(element_type) if element_type is not None else dtypes.dtype_of_numpy(array.dtype)
    if dt.kind == "bool":
        data = np.where(array.astype(bool), np.int8(-1), np.int8(0)).tobytes()
    else:
        data = np.ascontiguousarray(array.astype(dt.numpy.newbyteorder("<"), copy=False)).tobytes()
    return DenseIntOrFPElementsAttr(TensorType(dt.element_type, array.shape), BytesAttr(data))


def numpy_to_dense_compact(array: np.ndarray, element_type: Attribute | None = None) -> DenseIntOrFPElementsAttr:
    """As `numpy_to_dense`, but an array whose elements are all the same is stored as one
    element (a splat, printed `dense<1.5>`), so folding a broadcast adds no large constant."""
    array = np.asarray(array)
    if array.size <= 1:
        return numpy_to_dense(array, element_type)
    first = array.reshape(-1)[:1]
    same = np.array_equal(array, np.broadcast_to(first, array.shape), equal_nan=array.dtype.kind in "fc")
    if not same:
        return numpy_to_dense(array, element_type)
    one = numpy_to_dense(first.reshape(()), element_type)
    return DenseIntOrFPElementsAttr(TensorType(one.get_element_type(), array.shape), one.data)
