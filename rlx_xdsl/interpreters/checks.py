"""Run-time checks of every kernel call against the op's declared types.

The verifier cannot check what `?` dims hide; the interpreter can, because it
knows every shape. Before a kernel runs, `expected_results` re-runs the op's own
type inference on the operands' run-time shapes (so a `?` dim gets exactly the
verifier's check and message) and refuses results that would not fit in memory;
after it runs, `check_results` makes sure no result contradicts its declared type.
Every failure is a `KernelError` naming the op.
"""

from __future__ import annotations

import math
import os
import sys
from collections.abc import Sequence
from typing import NamedTuple

import numpy as np
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation
from xdsl.traits import ConstantLike
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.dialects.base import RlxOperation, types_compatible
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.shapes import DYNAMIC, fmt_shape

LARGE_RESULT_BYTES = 64 * 2**20
"""Results at least this big are compared with the memory available before computing."""


def available_memory() -> int | None:
    """Bytes of memory the process can still allocate (Linux `MemAvailable`), if known."""
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def format_bytes(n: int) -> str:
    """`17179869184 bytes (16.0 GiB)`: exact, and readable."""
    return f"{n} bytes ({n / 2**30:.1f} GiB)" if n >= 2**30 else f"{n} bytes"


def require_memory(nbytes: int, what: str) -> None:
    """Refuse (`KernelError`) to allocate `nbytes` for `what` when memory cannot hold it."""
    if nbytes < LARGE_RESULT_BYTES:
        return
    available = available_memory()
    if available is not None and nbytes > available:
        raise KernelError(f"{what} would need {format_bytes(nbytes)}, more than the {format_bytes(available)} available")


class _Signature(NamedTuple):
    type: TensorType
    shape: tuple[int, ...]
    dtype: np.dtype | None
    """None for element types outside RLX's dtypes (not checked)."""
    nbytes: int | None
    """None when the shape has `?` dims."""


_SIGNATURES: dict[int, _Signature] = {}


def _signature(t: TensorType) -> _Signature:
    """Shape, dtype and size of a tensor type, cached by identity (types are immutable,
    and the cache keeps each one alive, so its id cannot be reused while cached)."""
    entry = _SIGNATURES.get(id(t))
    if entry is None or entry.type is not t:
        if len(_SIGNATURES) > 4096:
            _SIGNATURES.clear()
        shape = tuple(t.get_shape())
        try:
            dtype = dtypes.numpy_dtype(t.element_type)
        except dtypes.UnsupportedDTypeError:
            dtype = None
        static = DYNAMIC not in shape
        nbytes = math.prod(shape) * dtype.itemsize if static and dtype is not None else None
        entry = _SIGNATURES[id(t)] = _Signature(t, shape, dtype, nbytes)
    return entry


def _runtime_type(declared: Attribute, array: np.ndarray) -> Attribute:
    """`declared` with the array's run-time shape."""
    if not isinstance(declared, TensorType):
        return declared
    return TensorType(declared.element_type, array.shape)


def _index(op: Operation, what: str, index: int, count: int) -> str:
    return what if count == 1 else f"{what} #{index}"


def check_arguments(f: Operation, args: Sequence[np.ndarray]) -> None:
    """A function's argument arrays must match its argument types (count, shape, dtype)."""
    block_args = f.regions[0].blocks.first.args if f.regions and f.regions[0].blocks else ()
    if len(args) != len(block_args):
        raise KernelError(f"'{f.name}' takes {len(block_args)} arguments, got {len(args)}", f)
    for index, (arg, array) in enumerate(zip(block_args, args)):
        _check_value(f, f"argument #{index}", arg.type, array)


def expected_results(op: Operation, args: Sequence[np.ndarray]) -> Sequence[Attribute]:
    """The result types the op must produce for these operands (checked before computing).

    For an op whose operand types have `?` dims, its type inference runs again on the
    run-time shapes; an error there is the verifier's error for those shapes.
    """
    declared = [r.type for r in op.results]
    dynamic = any(isinstance(v.type, TensorType) and DYNAMIC in _signature(v.type).shape for v in op.operands)
    if not dynamic or not isinstance(op, RlxOperation) or op.regions:
        return declared
    try:
        inferred = op.inferred_types_for([_runtime_type(v.type, a) for v, a in zip(op.operands, args)])
    except VerifyException as e:
        raise KernelError(f"{e.args[0]} (at run time)", op) from None
    for index, (want, got) in enumerate(zip(declared, inferred)):
        if not types_compatible(want, got):
            which = _index(op, "result", index, len(declared))
            raise KernelError(
                f"'{op.name}' {which} would have run-time type {got}, but its declared type is {want}", op
            )
    return inferred


def check_memory(op: Operation, expected: Sequence[Attribute]) -> None:
    """Refuse results that cannot fit in memory, before the kernel tries to build them.

    Constants are exempt: their values exist already (a splat as one element), but
    no array, not even a broadcast view, can have more than `sys.maxsize` bytes.
    """
    for index, t in enumerate(expected):
        if isinstance(t, TensorType) and (nbytes := _signature(t).nbytes) is not None:
            if nbytes > sys.maxsize:  # even a broadcast view cannot have that many bytes
                which = _index(op, "result", index, len(expected))
                raise KernelError(f"'{op.name}' {which} {t} has more elements than numpy arrays can hold", op)
            if nbytes < LARGE_RESULT_BYTES or op.has_trait(ConstantLike):
                continue
            try:
                require_memory(nbytes, f"{_index(op, 'result', index, len(expected))} {t}")
            except KernelError as e:
                raise KernelError(f"'{op.name}' {e.message}", op) from None


def check_results(op: Operation, expected: Sequence[Attribute], results: Sequence[np.ndarray]) -> None:
    """Each result must have the expected shape (static dims) and dtype."""
    if len(results) != len(expected):
        raise KernelError(f"'{op.name}' produced {len(results)} results, its type declares {len(expected)}", op)
    for index, (t, array) in enumerate(zip(expected, results)):
        _check_value(op, _index(op, "result", index, len(expected)), t, array)


def _check_value(op: Operation, what: str, t: Attribute, array: np.ndarray) -> None:
    if not isinstance(t, TensorType):
        return
    _, shape, expected, _ = _signature(t)
    if expected is None:
        return
    actual = np.shape(array)
    if len(actual) != len(shape) or any(d != DYNAMIC and d != a for d, a in zip(shape, actual)):
        raise KernelError(
            f"'{op.name}' {what} has run-time shape {fmt_shape(actual)}, but its type is {t}", op
        )
    if np.asarray(array).dtype != expected:
        actual_name = _dtype_name(np.asarray(array).dtype)
        raise KernelError(f"'{op.name}' {what} has run-time element type {actual_name}, but its type is {t}", op)


def _dtype_name(dt: np.dtype) -> str:
    try:
        return dtypes.dtype_of_numpy(dt).name
    except dtypes.UnsupportedDTypeError:
        return str(dt)
