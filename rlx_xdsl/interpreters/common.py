"""What every kernel shares: the kernel signature, dtype-faithful results, the
run-time error type and (from `numerics`) the accumulation dtype."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, Region

from rlx_xdsl import dtypes
from rlx_xdsl.numerics import KernelError, accumulation_dtype, convert, widened

__all__ = [
    "Kernel",
    "KernelError",
    "RegionRunner",
    "accumulation_dtype",
    "as_result",
    "compute_dtype",
    "promoted",
    "result_dtype",
    "widened",
]


def result_dtype(op: Operation, index: int = 0) -> np.dtype:
    """The numpy dtype of the op's `index`-th result."""
    t = op.results[index].type
    assert isinstance(t, TensorType)
    return dtypes.numpy_dtype(t.element_type)


def as_result(op: Operation, value: Any, index: int = 0) -> np.ndarray:
    """`value` as an ndarray in the dtype of result `index`, rounded once (`numerics.convert`)."""
    return convert(np.asarray(value), result_dtype(op, index))


def compute_dtype(*arrays: np.ndarray) -> np.dtype:
    """The numpy dtype RLX promotion gives for the arrays' dtypes."""
    element = dtypes.promote_all(*(dtypes.dtype_of_numpy(a.dtype).element_type for a in arrays))
    return dtypes.numpy_dtype(element)


def promoted(*arrays: np.ndarray) -> tuple[np.ndarray, ...]:
    """The arrays converted to their common `compute_dtype`, as binary ops combine them."""
    dt = compute_dtype(*arrays)
    return tuple(convert(a, dt) for a in arrays)


Kernel = Callable[..., tuple[np.ndarray, ...]]
"""`kernel(op, *operand_arrays) -> result_arrays`: one op's numpy semantics.

Kernels of ops with regions also take `run_region=` (a `RegionRunner`).
"""

RegionRunner = Callable[[Region, Sequence[np.ndarray]], tuple[np.ndarray, ...]]
"""Runs a region's block on argument values and returns what its terminator yields."""
