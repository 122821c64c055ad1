"""`conversions.special`'s functions as `arith`/`math` ops of a `linalg.generic` body.

`Scalar` wraps an f64 SSA value of a body under construction: each Python operator on it
(`+ - * /`, unary `-`, `< <= > ==`, with floats or other `Scalar`s) emits one op through the
body's `Scalars`, so the shared formulas of `conversions.special` build IR unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import math
from xdsl.ir import SSAValue

from rlx_xdsl import dtypes
from rlx_xdsl.conversions import special
from rlx_xdsl.conversions.mir_to_linalg.scalars import Scalars

F64 = dtypes.dtype_named("f64")


@dataclass(frozen=True, eq=False)
class Scalar:
    """An f64 value (or, from a comparison, an i1) of the body `s` builds."""

    s: Scalars
    value: SSAValue

    def _of(self, other: Scalar | float) -> SSAValue:
        return other.value if isinstance(other, Scalar) else self.s.constant(float(other), F64)

    def _new(self, value: SSAValue) -> Scalar:
        return Scalar(self.s, value)

    def __neg__(self):
        return self._new(self.s.neg(self.value, F64))


def _operator(emit, reflected: bool = False):
    """A `Scalar` operator emitting `emit(s, a, b, F64)`; `reflected`: the other operand first."""

    def apply(self: Scalar, other: Scalar | float) -> Scalar:
        a, b = self.value, self._of(other)
        return self._new(emit(self.s, *((b, a) if reflected else (a, b)), F64))

    return apply


for _name, _emit in (("add", Scalars.add), ("sub", Scalars.sub), ("mul", Scalars.mul), ("truediv", Scalars.div)):
    setattr(Scalar, f"__{_name}__", _operator(_emit))
    setattr(Scalar, f"__r{_name}__", _operator(_emit, reflected=True))
for _predicate in ("lt", "le", "gt", "eq"):  # `==` emits a comparison, as numpy's and JAX's do
    setattr(Scalar, f"__{_predicate}__", _operator(lambda s, a, b, dt, p=_predicate: s.compare(p, a, b, dt)))


def _operations(s: Scalars):
    """`where`, `exp` and `floor` on `Scalar`s, as `conversions.special` takes them."""

    def where(cond: Scalar, a: Scalar | float, b: Scalar | float) -> Scalar:
        return cond._new(s.select(cond.value, cond._of(a), cond._of(b)))

    def exp(x: Scalar) -> Scalar:
        return x._new(s.exp(x.value))

    def floor(x: Scalar) -> Scalar:
        return x._new(s.unary(math.FloorOp, x.value))

    return where, exp, floor


def log1p(s: Scalars, x: SSAValue) -> SSAValue:
    """`special.log1p` of the f64 scalar `x`."""
    where, _, _ = _operations(s)
    return special.log1p(Scalar(s, x), where, lambda v: v._new(s.log(v.value))).value


def expm1(s: Scalars, x: SSAValue) -> SSAValue:
    """`special.expm1` of the f64 scalar `x`."""
    where, exp, _ = _operations(s)
    return special.expm1(Scalar(s, x), where, exp, lambda v: v._new(s.log(v.value))).value


def erfc(s: Scalars, z: SSAValue) -> SSAValue:
    """`special.erfc` of the f64 scalar `z`."""
    return special.erfc(Scalar(s, z), *_operations(s)).value


def erf(s: Scalars, z: SSAValue) -> SSAValue:
    """`special.erf` of the f64 scalar `z`."""
    return special.erf(Scalar(s, z), *_operations(s)).value
