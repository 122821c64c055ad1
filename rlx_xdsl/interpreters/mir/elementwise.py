"""numpy semantics of MIR constants, casts and elementwise ops.

Activations of f16/bf16 compute in f32 and round once; integer arithmetic stays in
integers (`numerics.divide`, `numerics.power`); every conversion goes through
`numerics.convert`.
"""

from __future__ import annotations

import math

import numpy as np

from rlx_xdsl import numerics
from rlx_xdsl.dialects.base import like_at_run_time
from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir.attrs import ComparePredicate
from rlx_xdsl.interpreters.common import (
    KernelError,
    as_result,
    promoted,
    result_dtype,
    widened,
)
from rlx_xdsl.ir.dense import dense_to_numpy
from rlx_xdsl.shapes import sized_like

_erf = np.vectorize(math.erf, otypes=[np.float64])
_erfc = np.vectorize(math.erfc, otypes=[np.float64])


def gelu_cdf(x: np.ndarray) -> np.ndarray:
    """The standard normal CDF `Phi(x) = erfc(-x / sqrt(2)) / 2`, in float64 (exact gelu is
    `x * Phi(x)`); `(1 + erf(x / sqrt(2))) / 2` would cancel to nothing below x = -6."""
    return 0.5 * _erfc(-x.astype(np.float64) / math.sqrt(2.0))


def gelu(x: np.ndarray) -> np.ndarray:
    return x * gelu_cdf(x)


GELU_TANH_SCALE = math.sqrt(2.0 / math.pi)


def gelu_approx(x: np.ndarray) -> np.ndarray:
    """tanh-GELU `0.5 x (1 + tanh(u))`, `u = √(2/π) (x + 0.044715 x³)` (Hendrycks and
    Gimpel, 2016; PyTorch's `gelu(approximate="tanh")`), computed as the same number
    `x / (1 + exp(-2u))` (`(1 + tanh u) / 2 = σ(2u)`) in f64 and rounded once: `1 + tanh(u)`
    cancels to nothing below x ≈ -5 in f32 (and below -6 in f64)."""
    w = x.astype(np.float64)
    u = GELU_TANH_SCALE * (w + 0.044715 * (w * w * w))
    with np.errstate(over="ignore", invalid="ignore"):  # exp(-2u) overflows: 0; -inf / inf: NaN
        return w / (1.0 + np.exp(-2.0 * u))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


UNARY = {
    ew.GeluOp: gelu,
    ew.GeluApproxOp: gelu_approx,
    ew.SiluOp: lambda x: x * sigmoid(x),
    ew.ReluOp: lambda x: numerics.maximum(x, np.zeros((), x.dtype)),
    ew.SigmoidOp: sigmoid,
    ew.TanhOp: np.tanh,
    ew.ExpOp: np.exp,
    ew.LogOp: np.log,
    ew.SqrtOp: np.sqrt,
    ew.RsqrtOp: lambda x: 1.0 / np.sqrt(x),
    ew.NegOp: np.negative,
    ew.AbsOp: np.abs,
    ew.SinOp: np.sin,
    ew.CosOp: np.cos,
    ew.TanOp: np.tan,
    ew.AtanOp: np.arctan,
    ew.RoundOp: numerics.round_half_away,
    ew.Log1pOp: np.log1p,
    ew.Expm1Op: np.expm1,
    ew.ErfOp: _erf,  # float64 (math.erf per element), rounded once to the result dtype
}


BINARY = {
    ew.AddOp: numerics.on_integers(np.add),
    ew.SubOp: numerics.on_integers(np.subtract),
    ew.MulOp: numerics.on_integers(numerics.multiply),
    ew.DivOp: numerics.divide,
    ew.MaxOp: numerics.maximum,
    ew.MinOp: numerics.minimum,
    ew.PowOp: numerics.power,
}

COMPARE = {
    ComparePredicate.EQ: np.equal,
    ComparePredicate.NE: np.not_equal,
    ComparePredicate.LT: np.less,
    ComparePredicate.LE: np.less_equal,
    ComparePredicate.GT: np.greater,
    ComparePredicate.GE: np.greater_equal,
}


def run_constant(op: ew.ConstantOp) -> tuple[np.ndarray]:
    return (dense_to_numpy(op.value),)


def run_iota(op: ew.IotaOp, like: np.ndarray | None = None) -> tuple[np.ndarray]:
    shape = sized_like(op.result.type.get_shape(), *like_at_run_time(op, like))
    axis = op.normalized_dimension()
    ramp = np.arange(shape[axis]).reshape([-1 if d == axis else 1 for d in range(len(shape))])
    return (np.broadcast_to(numerics.convert(ramp, result_dtype(op)), shape),)


def run_cast(op: ew.CastOp, x: np.ndarray) -> tuple[np.ndarray]:
    if not op.is_plain:
        # RLX defines CastConfig's scaling fields but no kernel reads them, and a blocked
        # cast's result means nothing without its scaling factors, which this op has no
        # result for: refuse rather than guess.
        raise KernelError(
            "with sf_block has no reference kernel: RLX reserves CastConfig's "
            "scaling-factor fields for future quantization passes and gives them no semantics"
        )
    return (numerics.convert(x, result_dtype(op)),)


def run_where(op: ew.WhereOp, cond: np.ndarray, on_true: np.ndarray, on_false: np.ndarray) -> tuple[np.ndarray]:
    on_true, on_false = promoted(on_true, on_false)
    return (as_result(op, np.where(cond != 0, on_true, on_false)),)


def run_compare(op: ew.CompareOp, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    return (COMPARE[op.predicate.data](*promoted(lhs, rhs)),)


def run_binary(op: ew.BinaryOperation, lhs: np.ndarray, rhs: np.ndarray) -> tuple[np.ndarray]:
    with np.errstate(all="ignore"):
        return (as_result(op, BINARY[type(op)](*promoted(lhs, rhs))),)


def run_unary(op: ew.UnaryOperation, x: np.ndarray) -> tuple[np.ndarray]:
    # Bools act as the integers 0 and 1 (neg(true) is -1, so true); halves run in f32.
    work = x.astype(np.int8) if x.dtype.kind == "b" else widened(x)
    with np.errstate(all="ignore"):
        return (as_result(op, UNARY[type(op)](work)),)


KERNELS = {
    ew.ConstantOp: run_constant,
    ew.IotaOp: run_iota,
    ew.CastOp: run_cast,
    ew.WhereOp: run_where,
    ew.CompareOp: run_compare,
    **{op: run_binary for op in BINARY},
    **{op: run_unary for op in UNARY},
}
