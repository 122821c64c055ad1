"""`rlx-jvp` through region ops kept whole: scans (carries, bcasts, xs, checkpoints), `mir.if`,
`mir.while` (bounded or not) and `mir.custom_fn` (forward body, or its own jvp body).

The functions are the single-op cases of `testing.op_cases`, widened to f64; each
float argument is moved alone along a random direction and every float result's
tangent is compared with central differences of the interpreter. The scan RNN of
`examples/rnn_scan.mlir` is checked the same way.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rlx_xdsl.autodiff.jvp import build_jvp
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.structured import ScanOp
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.run import run_function
from rlx_xdsl.testing import op_cases
from rlx_xdsl.testing.gradcheck import EPS
from rlx_xdsl.testing.widen import widen_to_f64

RNG = np.random.default_rng(261)
CASES = {c.name: c for c in [*op_cases._region_cases(), *op_cases._structured_cases()]}


def is_float(x):
    return np.asarray(x).dtype.kind == "f"


def check_region_jvp(module, name, inputs):
    function = find_function(module, name)
    wrt = [i for i, x in enumerate(inputs) if is_float(x)]
    build_jvp(module, name, [str(i) for i in wrt])
    module.verify()
    for position, index in enumerate(wrt):
        tangents = [np.zeros_like(inputs[i]) for i in wrt]
        tangents[position] = RNG.standard_normal(np.shape(inputs[index]))
        outputs = run_function(module, f"{name}_jvp", [*inputs, *tangents])
        count = len(outputs) // 2

        def at(sign):
            args = list(inputs)
            args[index] = inputs[index] + sign * EPS * tangents[position]
            return run_function(module, name, args)

        up, down = at(1), at(-1)
        for k in range(count):
            if is_float(outputs[k]):
                expected = (np.asarray(up[k]) - np.asarray(down[k])) / (2 * EPS)
                np.testing.assert_allclose(outputs[count + k], expected, rtol=1e-5, atol=1e-7)
    return function


@pytest.mark.parametrize("name", ["scan", "custom_fn", "if_true", "if_false", "while", "while_bounded"])
def test_region_op_tangents_match_central_differences(name):
    case = CASES[name]
    module = widen_to_f64(op_cases.cases_module([case]))
    inputs = [
        np.asarray(x, np.float64) if is_float(x) else x
        for x in op_cases.case_inputs(case, find_function(module, name))
    ]
    if name == "while":
        inputs[0] = inputs[0] + 0.5  # 1.0 reaches the bound 100 exactly: a step of x changes the trip count
    check_region_jvp(module, name, inputs)


def test_scan_is_one_scan_over_carry_and_tangent_carry():
    """The rebuilt scan replaces the forward one: as many scans in @scan_jvp as in @scan."""
    module = widen_to_f64(op_cases.cases_module([CASES["scan"]]))
    build_jvp(module, "scan", ["0", "2"])
    count = lambda f: sum(isinstance(op, ScanOp) for op in find_function(module, f).walk())  # noqa: E731
    assert count("scan_jvp") == count("scan") == 3


def test_rnn_scan_example():
    module = parse_module((Path(__file__).parents[2] / "examples/rnn_scan.mlir").read_text())
    module = widen_to_f64(module)
    function = next(iter(module.ops))
    name = function.sym_name.data
    inputs = [RNG.standard_normal(t.get_shape()) * 0.5 for t in function.function_type.inputs]
    check_region_jvp(module, name, inputs)


CUSTOM_JVP = """
func.func @f(%x: tensor<4xf64>) -> tensor<4xf64> {
  %y = mir.custom_fn (%x) : (tensor<4xf64>) -> tensor<4xf64> {
  ^bb0(%a: tensor<4xf64>):
    %s = mir.mul %a, %a : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xf64>
    mir.yield %s : tensor<4xf64>
  } jvp {
  ^bb0(%a: tensor<4xf64>, %s: tensor<4xf64>, %t: tensor<4xf64>):
    %three = mir.constant dense<3.0> : tensor<f64>
    %u = mir.mul %t, %three : (tensor<4xf64>, tensor<f64>) -> tensor<4xf64>
    mir.yield %u : tensor<4xf64>
  }
  func.return %y : tensor<4xf64>
}
"""


def test_custom_fn_uses_its_jvp_body():
    """The jvp body is the user's rule, even a wrong one (`3 t` for `x^2`): it is inlined, not derived."""
    module = parse_module(CUSTOM_JVP)
    build_jvp(module, "f", ["0"])
    x, t = RNG.standard_normal(4), RNG.standard_normal(4)
    y, ty = run_function(module, "f_jvp", [x, t])
    np.testing.assert_allclose(y, x * x)
    np.testing.assert_allclose(ty, 3 * t)
