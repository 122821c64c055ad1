"""What every kernel shares: the kernel signature, dtype-faithful results and the
accumulation dtype."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import ml_dtypes
import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region

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


Kernel = Callable[..., tuple[np.ndarray, ...]]
"""`kernel(op, *operand_arrays) -> result_arrays`: one op's numpy semantics.

Kernels of ops with regions also take `run_region=` (a `RegionRunner`).
"""

RegionRunner = Callable[[Region, Sequence[np.ndarray]], tuple[np.ndarray, ...]]
"""Runs a region's block on argument values and returns what its terminator yields."""
