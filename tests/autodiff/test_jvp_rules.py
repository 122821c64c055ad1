"""Every JVP rule against central differences in float64, on the VJP rules' cases.

Each case of `test_rules.py` (`@f(inputs) = mir.<op>(inputs)`, shapes covering
broadcasting, ties, zeros, masked rows) is pushed forward with `rlx-jvp` along
random tangents of all its floating-point DATA inputs at once, and the
tangent is compared with `(f(x + eps v) - f(x - eps v)) / 2 eps` run by the
interpreter. The coverage test (`test_registry.py`'s JVP counterpart below)
requires a JVP rule for every op that has a VJP rule.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl import layers
from rlx_xdsl.autodiff.jvp import jvp_function
from rlx_xdsl.autodiff.jvp_registry import JVP_RULES
from rlx_xdsl.autodiff.registry import VJP_RULES
from rlx_xdsl.dialects.mir import ALL_OPS
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.gradcheck import EPS

_spec = importlib.util.spec_from_file_location("vjp_rule_cases", Path(__file__).with_name("test_rules.py"))
_cases = sys.modules["vjp_rule_cases"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_cases)
CASES, build = _cases.CASES, _cases.build
"""The VJP rules' cases, one list for both modes."""

layers.load("vjp")
layers.load("vjp"), layers.load("jvp")
RNG = np.random.default_rng(7)


def directional(f, inputs, wrt, directions, eps):
    def moved(sign):
        args = list(inputs)
        for i, d in zip(wrt, directions):
            args[i] = (np.asarray(inputs[i], np.float64) + sign * eps * d).astype(inputs[i].dtype)
        return np.asarray(f(args), np.float64)

    return (moved(1) - moved(-1)) / (2 * eps)


def check_jvp(module, inputs, wrt, *, eps=EPS, rtol=1e-5, atol=1e-7):
    """`@f_jvp`'s tangent of result 0 against central differences of `@f`, along a random
    direction of each `wrt` input in turn (the others' tangents zero): moving every input at
    once could leave an op's domain (`pow` at a zero base) where each move alone does not."""
    function = next(iter(module.ops))
    module.body.block.add_op(jvp_function(function, wrt, "f_jvp"))
    module.verify()
    for position, index in enumerate(wrt):
        tangents = [np.zeros_like(inputs[i]) for i in wrt]
        tangents[position] = RNG.standard_normal(np.shape(inputs[index])).astype(inputs[index].dtype)
        outputs = run_function(module, "f_jvp", [*inputs, *tangents])
        count = len(outputs) // 2
        expected = directional(
            lambda args: run_function(module, "f", args)[0], inputs, [index], [tangents[position]], eps
        )
        np.testing.assert_allclose(np.asarray(outputs[count], np.float64), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("c", CASES)
def test_jvp_rule_matches_central_differences(c):
    module, wrt = build(c)
    op = next(iter(module.ops)).body.block.first_op
    if JVP_RULES.lookup(op) is None:
        pytest.fail(f"no JVP rule for {op.name}")
    check = {k: v for k, v in c.check.items() if k in ("eps", "rtol", "atol")}
    check_jvp(module, c.inputs, wrt, **check)


def test_every_op_with_a_vjp_rule_has_a_jvp_rule():
    """Forward mode covers everything reverse mode does (a `NoJvpRule` with its reason counts)."""
    missing = [op.name for op in ALL_OPS if op in VJP_RULES and op not in JVP_RULES]
    assert missing == []


def test_dense_sce_targets_tangent_at_zero_targets_is_minus_the_logits():
    """`loss = logsumexp(x) - sum(t x)` is linear in t, zero targets included: the tangent
    along t is `-sum(x dt)` (the transpose of the reverse rule's `dt = -x g`). The rule
    used to push a zero target's tangent through the row max (`-max(x) dt`)."""
    from rlx_xdsl.context import parse_module

    module = parse_module(
        "func.func @f(%x: tensor<3x4xf64>, %t: tensor<3x4xf64>) -> tensor<3xf64> {\n"
        "  %l = mir.softmax_cross_entropy %x, %t : (tensor<3x4xf64>, tensor<3x4xf64>) -> tensor<3xf64>\n"
        "  func.return %l : tensor<3xf64>\n}"
    )
    x = RNG.standard_normal((3, 4))
    t = np.array([[1.0, 0, 0, 0], [0, 0.5, 0.5, 0], [0.25, 0, 0, 0.75]])
    check_jvp(module, [x, t], [0, 1])
