"""numpy arrays <-> builtin `dense<...>` attributes, through their bytes.

xDSL stores a `DenseIntOrFPElementsAttr` as raw little-endian bytes in the
element type's layout, which for RLX's dtypes is numpy's own layout except for
`i1` (one byte per element, true stored as 0xFF). Converting through the buffer
costs O(bytes) in numpy instead of a Python object per element.

A splat (every element the same bits) is stored as ONE element, whatever the
shape: `dense<0.0> : tensor<1x32x2048x128xf32>` holds 4 bytes, and reads back as
a read-only broadcast view, so nothing is expanded until a kernel needs it. The
parser (`parser.py`) and `numpy_to_dense` both store splats this way, so equal
constants are equal attributes; xDSL prints a one-element attribute as a splat.
"""

from __future__ import annotations

import math

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, TensorType
from xdsl.ir import Attribute

from rlx_xdsl import dtypes
from rlx_xdsl.numerics import convert


def stored_elements(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The elements the attribute stores, flat, in its dtype (one for a splat)."""
    dt = dtypes.dtype_of(attr.get_element_type())
    raw = np.frombuffer(attr.data.data, dtype=np.int8 if dt.kind == "bool" else dt.numpy.newbyteorder("<"))
    if dt.kind == "bool":
        return raw != 0
    return raw if raw.dtype == dt.numpy else raw.astype(dt.numpy)


def dense_to_numpy(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """The attribute's values as a read-only ndarray of its element type and shape.

    A splat (one stored element for a larger shape) is broadcast, not copied.
    """
    raw = stored_elements(attr)
    shape = attr.get_shape()
    if raw.size == 1 and math.prod(shape) != 1:
        return np.broadcast_to(raw.reshape(()), shape)
    return raw.reshape(shape)


def numpy_to_dense(array: np.ndarray, element_type: Attribute | None = None) -> DenseIntOrFPElementsAttr:
    """A dense attribute holding `array`, converted (rounded once) to `element_type`
    (default: its own dtype); an array of one repeated value is stored as a splat."""
    array = np.asarray(array)
    dt = dtypes.dtype_of(element_type) if element_type is not None else dtypes.dtype_of_numpy(array.dtype)
    values = convert(array, dt.numpy).reshape(-1)
    if values.size > 1 and _same_bits(values):
        values = values[:1]
    if dt.kind == "bool":
        data = np.where(values, np.int8(-1), np.int8(0)).tobytes()
    else:
        data = np.ascontiguousarray(values.astype(dt.numpy.newbyteorder("<"), copy=False)).tobytes()
    return DenseIntOrFPElementsAttr(TensorType(dt.element_type, array.shape), BytesAttr(data))


def _same_bits(values: np.ndarray) -> bool:
    """Every element of the flat array has the first one's bytes (NaNs included)."""
    raw = np.ascontiguousarray(values).view(np.uint8).reshape(values.size, -1)
    return bool((raw == raw[0]).all())


def splat_dense(value: float | int | bool, element_type: Attribute, shape) -> DenseIntOrFPElementsAttr:
    """A splat `dense<value>` of `shape`: one stored element, whatever the size.

    Zeros and scale factors the size of a weight matrix cost O(1) in IR text.
    """
    single = numpy_to_dense(np.asarray(value), element_type)
    return DenseIntOrFPElementsAttr(TensorType(single.get_element_type(), list(shape)), single.data)
