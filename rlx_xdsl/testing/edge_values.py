"""Edge-value inputs per dtype, for the differential test of the backends.

`edge_values(dtype)` lists the values where implementations disagree: ±0, ±inf,
NaN, the smallest subnormals, the largest finite values, the smallest normal,
exact ties of rounding (0.5, 2.5, -1.5), integer limits and their neighbours,
negative values (out-of-range indices of gathers). `edge_array(type, k)` fills a
static tensor type with them, rotated and shuffled by the argument index `k`, so
the operands of a binary op meet in many different pairs; `edge_inputs(f)` gives
every argument of a function, `edge_floats(inputs)` puts edge values in the float and
complex arrays of a case's own inputs (keeping its ids, bytes and other integers in
their domain).
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
from xdsl.dialects import func
from xdsl.dialects.builtin import TensorType

from rlx_xdsl import dtypes


def _float_edges(dtype: np.dtype) -> list[float]:
    info = ml_dtypes.finfo(dtype) if dtype == ml_dtypes.bfloat16 else np.finfo(dtype)
    subnormal = float(info.smallest_subnormal)
    return [0.0, -0.0, np.inf, -np.inf, np.nan, subnormal, -subnormal, float(info.max), -float(info.max),
            float(info.smallest_normal), 1.0, -1.0, 0.5, -2.5, 1.5, 3.0, -7.0, 2.0]  # fmt: skip


def _int_edges(dtype: np.dtype) -> list[int]:
    info = np.iinfo(dtype)
    if info.min == 0:
        return [0, 1, int(info.max), int(info.max) - 1, 2, 7, 1 << (info.bits - 1), 3]
    return [0, -1, 1, int(info.min), int(info.max), int(info.min) + 1, int(info.max) - 1, 2, -7, 3]


def edge_values(dtype: np.dtype) -> np.ndarray:
    """The edge values of one numpy dtype (bool, signed/unsigned ints, f16/bf16/f32/f64,
    complex64), as a 1-D array of that dtype."""
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return np.array([False, True, True, False, True], np.bool_)
    if dtype.kind in "iu":
        return np.array(_int_edges(dtype), dtype)
    if dtype.kind == "c":
        parts = _float_edges(np.dtype(np.float32))
        return np.array([complex(a, b) for a, b in zip(parts, parts[3:] + parts[:3])], dtype)
    return np.array(_float_edges(dtype), dtype)


def edge_array(t: TensorType, k: int = 0) -> np.ndarray:
    """A tensor of static type `t` filled with the edge values of its dtype: argument `k`
    takes them in its own deterministic order (a shuffle seeded by `k`)."""
    return edge_like(np.empty(tuple(t.get_shape()), dtypes.numpy_dtype(t.element_type)), k)


def edge_like(x: np.ndarray, k: int = 0) -> np.ndarray:
    """An array of `x`'s shape and dtype filled as `edge_array` fills argument `k`."""
    values = edge_values(x.dtype)
    order = np.random.default_rng(k).permutation(len(values)) if k else np.arange(len(values))
    return values[order][np.arange(x.size) % len(values)].reshape(x.shape)


def edge_inputs(f: func.FuncOp) -> list[np.ndarray]:
    """Edge-value arrays for every argument of `f` (static shapes)."""
    return [edge_array(t, k) for k, t in enumerate(f.function_type.inputs)]


def edge_floats(inputs: list[np.ndarray]) -> list[np.ndarray]:
    """`inputs` with every float and complex array refilled with edge values (`edge_like`,
    argument k taking order k); integer and boolean arrays are kept."""
    return [edge_like(x, k) if x.dtype.kind in "fc" or x.dtype == ml_dtypes.bfloat16 else x for k, x in enumerate(inputs)]
