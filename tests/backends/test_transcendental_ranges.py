"""The transcendental unary ops over their whole range, not only at the edge values: on IREE
CPU and XLA CPU (at its default level), every f32 and f64 result is within the op's ulp
bound of the interpreter's (`differential.ulp_bound`: `ULP_BOUNDS`, or `F64_ULP_BOUNDS`
where f64 is documented wider), on `differential_cases.sweep_inputs()`.

Subnormal inputs and results are left out (flushing is the edge-value test's business).
This sweep found exact gelu 500000 ulps off at x = -5 on IREE and 24 on XLA, tanh-GELU
cancelling below x = -5 everywhere (the interpreter too), IREE's f32 atan 39 ulps off, its
f64 log1p and expm1 0 at 1e-16, and XLA's f64 log1p 120 ulps off.
"""

from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("iree.compiler")
jax = pytest.importorskip("jax")

from rlx_xdsl.backends.iree import IreeModule  # noqa: E402
from rlx_xdsl.testing.differential import F64_ULP_BOUNDS  # noqa: E402
from rlx_xdsl.testing.differential_cases import (  # noqa: E402
    SWEEP_DTYPES,
    sweep_input,
    sweep_mismatch,
    sweep_module,
    sweep_names,
    sweep_run,
    xla_runner,
)

DOCS = Path(__file__).resolve().parents[2] / "docs" / "deviations.md"


@pytest.fixture(scope="module")
def sweep():
    """`{(backend, dtype): {op: mismatch}}`: one IREE compile, one XLA program."""
    module = sweep_module()
    names = sweep_names()
    runners = {"iree": IreeModule(module).run, "xla": xla_runner(module, list(names), lambda f: [sweep_input(f.sym_name.data)])}
    found: dict = {}
    for (backend, name), reason in sweep_run(module, runners).items():
        op, dt = names[name]
        found.setdefault((backend, dt), {})[op] = reason
    return found


@pytest.mark.parametrize("dt", list(SWEEP_DTYPES))
@pytest.mark.parametrize("backend", ["iree", "xla"])
def test_transcendental_ops_stay_within_their_ulp_bounds(sweep, backend, dt):
    assert {op: reason for op, reason in sweep[backend, dt].items() if reason} == {}


def test_a_result_past_its_bound_is_reported():
    x = np.float32([0.5, 2.0])
    want = np.exp(x)
    five_ulps = np.nextafter(np.nextafter(np.nextafter(np.nextafter(np.nextafter(want, 9), 9), 9), 9), 9)
    assert sweep_mismatch("xla", "exp", five_ulps, want, x).startswith("5 ulps > 4")
    assert sweep_mismatch("xla", "exp", np.nextafter(want, 9), want, x) is None
    assert sweep_mismatch("xla", "exp", np.float32([0.0, 1e-40]), np.float32([0.0, 2e-40]), x) is None  # subnormal


def test_every_wider_f64_bound_has_its_docs_row():
    docs = DOCS.read_text()
    for (backend, op), bound in F64_ULP_BOUNDS.items():
        assert f"| {'IREE CPU' if backend == 'iree' else 'XLA CPU'} | `{op}` (f64) | within {bound} ulps" in docs, (backend, op)
