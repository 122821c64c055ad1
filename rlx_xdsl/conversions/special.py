"""Special functions computed from elementary operations, written once for every lowering.

`log1p` and `expm1` (Kahan's corrections of `log(1 + x)` and `exp(x) - 1`, for backends
whose f64 ones are those naive formulas) and `erfc(z, where, exp, floor)` and `erf(...)` take any f64 value with Python's arithmetic operators and
comparisons (a numpy or JAX array, or `mir_to_linalg.special.Scalar`, which emits one
`arith`/`math` op per operator) and the three functions it needs on them.

Upstream MLIR's `math.erfc` has no IREE CPU lowering (IREE 3.13: "failed to legalize
operation 'math.erfc'"), XLA's f64 `erfc` reads a rounded z² (hundreds of ulps below
z = -10), and `1 - erf(z)` cancels: exact GELU, `x Φ(x)` with `Φ(x) = erfc(-x/√2) / 2`, lost
every digit below x ≈ -5.5 in f32 that way. `erfc` here is W. J. Cody's rational Chebyshev
approximation ("Rational Chebyshev approximations for the error function", Math. Comp. 23
(1969), 631-637; the SPECFUN routine CALERF), about 1e-16 relative for every argument:

- |z| <= 0.46875: `1 - z P(z²) / Q(z²)`;
- 0.46875 < |z| <= 4: `exp(-z²) R(|z|) / S(|z|)`;
- |z| > 4: `exp(-z²) (1/√π - U(1/z²) / (z² V(1/z²))) / |z|`;

with `erfc(z) = 2 - erfc(|z|)` for z < 0. `exp(-z²)` is `exp(-t²) exp(-(|z| - t)(|z| + t))`
with `t = floor(16 |z|) / 16` (t² is exact, so no digit of z² is rounded away), as CALERF
does. The pieces are computed for every element and one is selected (no branches); NaN
stays NaN, erfc(+inf) = 0, erfc(-inf) = 2. `erf` is `z P(z²) / Q(z²)` for |z| <= 0.46875
and `±(1 - erfc(|z|))` beyond (erfc(|z|) < 0.52 there: nothing cancels); erf(±0) = ±0.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

SMALL_P = (3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02, 3.20937758913846947e03,
           1.85777706184603153e-1)  # fmt: skip
SMALL_Q = (2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03, 2.84423683343917062e03)
MIDDLE_R = (5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01, 2.98635138197400131e02,
            8.81952221241769090e02, 1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
            2.15311535474403846e-8)  # fmt: skip
MIDDLE_S = (1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02, 1.62138957456669019e03,
            3.29079923573345963e03, 4.36261909014324716e03, 3.43936767414372164e03, 1.23033935480374942e03)  # fmt: skip
LARGE_U = (3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1, 1.60837851487422766e-2,
           6.58749161529837803e-4, 1.63153871373020978e-2)  # fmt: skip
LARGE_V = (2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1, 6.05183413124413191e-2,
           2.33520497626869185e-3)  # fmt: skip
"""CALERF's coefficient sets A/B, C/D and P/Q, in its order."""

UNDERFLOW = 27.0
"""erfc(z) is below the smallest f64 subnormal from z ≈ 26.55 on: 0 there (and at +inf,
where the split `exp(-z²)` would give NaN)."""


def log1p(x, where, log, kept=lambda v: v):
    """log(1 + x) to a few ulps: `log(u) x / (u - 1)` with `u = 1 + x` (the rounding of u
    cancels out; W. Kahan, also Goldberg, "What every computer scientist should know about
    floating-point arithmetic", 1991, theorem 4); x where u rounds to 1, u where it is inf.
    `kept(u)` must keep u the rounded sum: a compiler that simplifies `(1 + x) - 1` to x
    (XLA does) undoes the correction."""
    u = kept(1.0 + x)
    return where(u == 1.0, x, where(u == float("inf"), u, log(u) * (x / (u - 1.0))))


def expm1(x, where, exp, log, kept=lambda v: v):
    """exp(x) - 1 to a few ulps: `(u - 1) x / log(u)` with `u = exp(x)` (Kahan's
    correction); x where u rounds to 1, -1 where u - 1 does, u where it is inf. `kept(u)` as
    for `log1p` (XLA simplifies `log(exp(x))` to x)."""
    u = kept(exp(x))
    return where(u == 1.0, x, where(u - 1.0 == -1.0, -1.0, where(u == float("inf"), u, (u - 1.0) * (x / log(u)))))


def _ratio(y, numerator: Sequence[float], denominator: Sequence[float]):
    """CALERF's `N(y) / D(y)`: `n = c[-1] y`, `d = y`, then `n = (n + c[i]) y`,
    `d = (d + e[i]) y` for each coefficient but the last two, and `(n + c[-2]) / (d + e[-1])`."""
    n, d = y * numerator[-1], y
    for c, e in zip(numerator[:-2], denominator[:-1]):
        n, d = (n + c) * y, (d + e) * y
    return (n + numerator[-2]) / (d + denominator[-1])


def _exp_minus_square(y, exp, floor):
    """`exp(-y²)` for y >= 0, with y² split so that its rounding loses no digits."""
    t = floor(y * 16.0) / 16.0
    return exp(-(t * t)) * exp(-((y - t) * (y + t)))


def erfc(z, where, exp, floor):
    """erfc(z) of f64 `z` (see the module docstring); `where(cond, a, b)`, `exp` and `floor`
    act on values like `z`."""
    y = where(z < 0.0, -z, z)
    square = y * y
    small = 1.0 - z * _ratio(square, SMALL_P, SMALL_Q)
    middle = _exp_minus_square(y, exp, floor) * _ratio(y, MIDDLE_R, MIDDLE_S)
    inverse = 1.0 / square
    tail = inverse * _ratio(inverse, LARGE_U, LARGE_V)
    large = _exp_minus_square(y, exp, floor) * ((1 / math.sqrt(math.pi) - tail) / y)
    positive = where(y <= 4.0, middle, where(y > UNDERFLOW, 0.0, large))
    return where(y <= 0.46875, small, where(z < 0.0, 2.0 - positive, positive))


def erf(z, where, exp, floor):
    """erf(z) of f64 `z` (see the module docstring), as `erfc` takes its arguments."""
    y = where(z < 0.0, -z, z)
    small = z * _ratio(y * y, SMALL_P, SMALL_Q)
    rest = 1.0 - erfc(y, where, exp, floor)
    return where(y <= 0.46875, small, where(z < 0.0, -rest, rest))
