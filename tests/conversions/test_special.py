"""`conversions.special.erfc` (Cody's rational approximation) against mpmath at 200 bits."""

import math

import mpmath
import numpy as np

from rlx_xdsl.conversions import special
from rlx_xdsl.testing.differential import ulp_distance


def _erfc(z: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):  # the unselected pieces divide by zero and overflow
        return special.erfc(z, np.where, np.exp, np.floor)


def test_erfc_is_within_a_few_ulps_of_mpmath_on_every_piece():
    rng = np.random.default_rng(0)
    z = np.concatenate([rng.uniform(-0.46875, 0.46875, 200), rng.uniform(0.46, 4.01, 300), rng.uniform(-6, -0.4, 200),
                        rng.uniform(4, 26.5, 300), [0.46875, 4.0, 1e-300, -1e-300]])  # fmt: skip
    with mpmath.workprec(200):
        exact = np.array([float(mpmath.erfc(mpmath.mpf(float(v)))) for v in z])
    assert ulp_distance(_erfc(z), exact).max() <= 5


def test_erfc_limits_and_special_values():
    got = _erfc(np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 27.5, 1e300, -1e300]))
    assert got[0] == 0 and got[1] == 2 and np.isnan(got[2]) and got[3] == 1 and got[4] == 1
    assert got[5] == 0 and got[6] == 0 and got[7] == 2
    assert abs(_erfc(np.array([26.5]))[0] / math.erfc(26.5) - 1) < 1e-14  # the last piece, before it underflows
