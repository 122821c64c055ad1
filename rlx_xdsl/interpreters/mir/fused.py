"""numpy semantics of the MIR fused ops, composed from the primitive kernels' formulas.

Each stage rounds to the op's dtype exactly where the unfused chain's op would,
so a fused op and its `rlx-unfuse` expansion compute the same values.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl.dialects.mir import fused
from rlx_xdsl.dialects.mir.elementwise import SiluOp, activation_op
from rlx_xdsl.interpreters.common import as_result, promoted, result_dtype, widened
from rlx_xdsl.numerics import accumulate_matmul, convert
from rlx_xdsl.interpreters.mir.elementwise import UNARY
from rlx_xdsl.interpreters.mir.norm import affine, rms_scale


def rounded(dtype: np.dtype, value: np.ndarray) -> np.ndarray:
    """`value` in `dtype`, as an intermediate op of that dtype would store it (rounded once)."""
    return convert(np.asarray(value), dtype)


def activate(kind, x: np.ndarray) -> np.ndarray:
    """The activation kernel of `kind` applied to `x` (halves computed in f32, as `mir` activations)."""
    with np.errstate(all="ignore"):
        return rounded(x.dtype, UNARY[activation_op(kind)](widened(x)))


def run_fused_matmul_bias_act(op: fused.FusedMatmulBiasActOp, x, w, bias) -> tuple[np.ndarray]:
    dt = result_dtype(op)
    a, b = promoted(x, w)
    with np.errstate(all="ignore"):
        value = rounded(dt, rounded(dt, accumulate_matmul(a, b)) + convert(bias, dt))
    if op.kind is not None:
        value = activate(op.kind, value)
    return (as_result(op, value),)


def swiglu_halves(x: np.ndarray, gate_first: bool) -> tuple[np.ndarray, np.ndarray]:
    """`(up, gate)`: the low and high halves of the last axis, swapped when `gate_first`."""
    half = x.shape[-1] // 2
    low, high = x[..., :half], x[..., half:]
    return (high, low) if gate_first else (low, high)


def run_fused_swiglu(op: fused.FusedSwigluOp, x) -> tuple[np.ndarray]:
    up, gate = swiglu_halves(x, op.is_gate_first)
    with np.errstate(all="ignore"):
        product = rounded(x.dtype, activate(SiluOp.KIND, gate) * up)
    return (convert(product, result_dtype(op)),)


def residual_sum(op: fused.FusedResidualNormOperation, x, residual, bias=None) -> np.ndarray:
    """`x + residual (+ bias)`, rounded after each add as the `mir.add` chain rounds."""
    dt = result_dtype(op)
    with np.errstate(all="ignore"):
        total = rounded(dt, x + residual)
        return total if bias is None else rounded(dt, total + bias)


def _split_operands(op: fused.FusedResidualNormOperation, arrays):
    """`(x, residual, bias or None, gamma, beta)` from the operand arrays in RLX's order."""
    if op.bias is None:
        x, residual, gamma, beta = arrays
        return x, residual, None, gamma, beta
    return tuple(arrays)


def run_fused_residual_rms_norm(op: fused.FusedResidualRmsNormOp, *arrays) -> tuple[np.ndarray]:
    x, residual, bias, gamma, beta = _split_operands(op, arrays)
    total = residual_sum(op, x, residual, bias)
    axes = tuple(range(op.normalized_axis(), total.ndim))
    return affine(op, rms_scale(widened(total), axes, op.eps.value.data), gamma, beta)


KERNELS = {
    fused.FusedMatmulBiasActOp: run_fused_matmul_bias_act,
    fused.FusedSwigluOp: run_fused_swiglu,
    fused.FusedResidualRmsNormOp: run_fused_residual_rms_norm,
}
