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


def splat_dense(value: float | int | bool, element_type: Attribute, shape) -> DenseIntOrFPElementsAttr:
    """A splat `dense<value>` of `shape`: one stored element, whatever the size.

    Zeros and scale factors the size of a weight matrix cost O(1) in IR text.
    """
    single = numpy_to_dense(np.asarray(value), element_type)
    return DenseIntOrFPElementsAttr(TensorType(single.get_element_type(), list(shape)), single.data)
