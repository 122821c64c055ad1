"""Comparing another backend's outputs with the interpreter's, with dtype-aware tolerances.

Exact ops (arithmetic, data movement) are held to a tight relative tolerance;
transcendental functions and reductions, whose rounding depends on evaluation
order and on the math library, to a looser one. Half-precision results get
tolerances of a few units in their last place. Integers and booleans must be
equal. The tolerance is relative to the magnitude of the expected tensor (its
largest finite entry, at least 1), so entries that cancel to nearly zero are
not held to a relative bound they cannot meet. NaN and inf must appear at the
same positions.
"""

from __future__ import annotations

import numpy as np

from rlx_xdsl import dtypes

TOLERANCES: dict[str, tuple[float, float]] = {
    "f64": (1e-12, 1e-10),
    "f32": (1e-5, 1e-4),
    "complex<f32>": (1e-5, 1e-4),  # compared as complex numbers: |got - expected|
    "f16": (2e-3, 1e-2),
    "bf16": (1.6e-2, 5e-2),
}
"""`dtype -> (exact, approximate)` relative tolerances."""


def tolerance(dtype: np.dtype, approximate: bool) -> float:
    """The relative tolerance for results of `dtype` (0 for integers and booleans)."""
    name = dtypes.dtype_of_numpy(dtype).name
    if name not in TOLERANCES:
        return 0.0
    exact, approx = TOLERANCES[name]
    return approx if approximate else exact


def mismatch(got: np.ndarray, expected: np.ndarray, approximate: bool) -> str | None:
    """Why `got` does not match `expected`, or None when it does."""
    if got.shape != expected.shape:
        return f"shape {got.shape} != expected {expected.shape}"
    if got.dtype != expected.dtype:
        return f"dtype {got.dtype} != expected {expected.dtype}"
    rtol = tolerance(expected.dtype, approximate)
    if rtol == 0.0:
        bad = got != expected
        return f"{int(bad.sum())} of {bad.size} elements differ" if bad.any() else None
    wide = np.complex128 if np.iscomplexobj(expected) else np.float64
    g, e = got.astype(wide), expected.astype(wide)
    finite = e[np.isfinite(e)]
    scale = max(1.0, float(np.abs(finite).max())) if finite.size else 1.0
    ok = np.isclose(g, e, rtol=rtol, atol=rtol * scale, equal_nan=True)
    if ok.all():
        return None
    worst = np.nanmax(np.where(ok, 0.0, np.abs(g - e)))
    return f"{int((~ok).sum())} of {ok.size} elements differ (max abs error {worst:.3g}, scale {scale:.3g}, rtol {rtol})"


def assert_matches(got: np.ndarray, expected: np.ndarray, approximate: bool = False, what: str = "") -> None:
    reason = mismatch(np.asarray(got), np.asarray(expected), approximate)
    assert reason is None, f"{what}: {reason}" if what else reason
