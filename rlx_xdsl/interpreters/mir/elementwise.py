"""numpy semantics of MIR constants, casts and elementwise ops."""

from __future__ import annotations

import math

import numpy as np
from xdsl.interpreter import Interpreter, InterpreterFunctions, impl, register_impls

from rlx_xdsl.dialects.mir import elementwise as ew
from rlx_xdsl.dialects.mir.attrs import ComparePredicate
from rlx_xdsl.interpreters.common import add_impls, as_result, compute_dtype, dense_to_numpy, result_dtype

_erf = np.vectorize(math.erf, otypes=[np.float64])


def gelu(x: np.ndarray) -> np.ndarray:
    return x * 0.5 * (1.0 + _erf(x.astype(np.float64) / math.sqrt(2.0)))


def gelu_approx(x: np.ndarray) -> np.ndarray:
    c = math.sqrt(2.0 / math.pi)
    return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x**3)))


def sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def round_half_away(x: np.ndarray) -> np.ndarray:
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


UNARY = {
    ew.GeluOp: gelu,
    ew.GeluApproxOp: gelu_approx,
    ew.SiluOp: lambda x: x * sigmoid(x),
    ew.ReluOp: lambda x: np.maximum(x, np.zeros((), x.dtype)),
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
    ew.RoundOp: round_half_away,
}


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind in "iub":
        return np.trunc(np.true_divide(a, b)).astype(a.dtype)  # Rust integer division truncates
    return a / b


BINARY = {
    ew.AddOp: np.add,
    ew.SubOp: np.subtract,
    ew.MulOp: np.multiply,
    ew.DivOp: _divide,
    ew.MaxOp: np.maximum,
    ew.MinOp: np.minimum,
    ew.PowOp: np.power,
}

COMPARE = {
    ComparePredicate.EQ: np.equal,
    ComparePredicate.NE: np.not_equal,
    ComparePredicate.LT: np.less,
    ComparePredicate.LE: np.less_equal,
    ComparePredicate.GT: np.greater,
    ComparePredicate.GE: np.greater_equal,
}


def _promoted(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    dt = compute_dtype(a, b)
    return a.astype(dt, copy=False), b.astype(dt, copy=False)


class ElementwiseFunctions(InterpreterFunctions):
    @impl(ew.ConstantOp)
    def run_constant(self, interp: Interpreter, op: ew.ConstantOp, args: tuple):
        return (dense_to_numpy(op.value),)

    @impl(ew.CastOp)
    def run_cast(self, interp: Interpreter, op: ew.CastOp, args: tuple):
        (x,) = args
        target = result_dtype(op)
        if x.dtype.kind == "f" and target.kind in "iu":
            x = np.trunc(x)  # float -> int truncates toward zero, like Rust `as`
        return (x.astype(target),)

    @impl(ew.WhereOp)
    def run_where(self, interp: Interpreter, op: ew.WhereOp, args: tuple):
        cond, on_true, on_false = args
        return (as_result(op, np.where(cond.astype(bool), on_true, on_false)),)

    @impl(ew.CompareOp)
    def run_compare(self, interp: Interpreter, op: ew.CompareOp, args: tuple):
        a, b = _promoted(*args)
        return (COMPARE[op.predicate.data](a, b),)

    def binary_kernel(self, interp: Interpreter, op: ew.BinaryOperation, args: tuple):
        a, b = _promoted(*args)
        with np.errstate(all="ignore"):
            return (as_result(op, BINARY[type(op)](a, b)),)

    def unary_kernel(self, interp: Interpreter, op: ew.UnaryOperation, args: tuple):
        (x,) = args
        with np.errstate(all="ignore"):
            return (as_result(op, UNARY[type(op)](x)),)


add_impls(ElementwiseFunctions, ew.BINARY_OPS, "binary_kernel")
add_impls(ElementwiseFunctions, ew.ACTIVATION_OPS, "unary_kernel")
ElementwiseFunctions = register_impls(ElementwiseFunctions)

FUNCTIONS = [ElementwiseFunctions]
