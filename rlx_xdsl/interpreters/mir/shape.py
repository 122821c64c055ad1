"""numpy semantics of MIR shape and data-movement ops."""

from __future__ import annotations

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from rlx_xdsl.dialects.mir import shape as sh


def narrow(x: np.ndarray, axis: int, start: int, length: int, op_name: str) -> np.ndarray:
    """`x[..., start:start + length, ...]` on `axis`; a slice past the end is an error.

    numpy would silently shorten such a slice; the verifier can only rule it
    out for static dims, so dynamic inputs are checked here.
    """
    axis %= x.ndim
    if start + length > x.shape[axis]:
        dim = x.shape[axis]
        raise ValueError(f"'{op_name}' start {start} + len {length} exceeds dim {dim} of axis {axis}")
    index = [slice(None)] * x.ndim
    index[axis] = slice(start, start + length)
    return x[tuple(index)]


def expand(x: np.ndarray, target_shape: tuple[int, ...]) -> np.ndarray:
    """`numpy.broadcast_to` with -1 keeping the aligned input dim, copied to a fresh array."""
    lead = len(target_shape) - x.ndim
    shape = [x.shape[i - lead] if d == -1 else d for i, d in enumerate(target_shape)]
    return np.array(np.broadcast_to(x, shape))


class ShapeFunctions(InterpreterFunctions):
    @impl(sh.ReshapeOp)
    def run_reshape(self, interp: Interpreter, op: sh.ReshapeOp, args: tuple):
        return (args[0].reshape(op.new_shape.get_values()),)

    @impl(sh.TransposeOp)
    def run_transpose(self, interp: Interpreter, op: sh.TransposeOp, args: tuple):
        return (args[0].transpose(op.perm.get_values()),)

    @impl(sh.NarrowOp)
    def run_narrow(self, interp: Interpreter, op: sh.NarrowOp, args: tuple):
        return (narrow(args[0], op.axis.value.data, op.start.value.data, op.len.value.data, op.name),)

    @impl(sh.ConcatOp)
    def run_concat(self, interp: Interpreter, op: sh.ConcatOp, args: tuple):
        return (np.concatenate(args, axis=op.axis.value.data),)

    @impl(sh.ExpandOp)
    def run_expand(self, interp: Interpreter, op: sh.ExpandOp, args: tuple):
        return (expand(args[0], op.target_shape.get_values()),)


ShapeFunctions = register_impls(ShapeFunctions)

FUNCTIONS = [ShapeFunctions]
