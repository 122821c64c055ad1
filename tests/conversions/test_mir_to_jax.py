"""Every primitive MIR op, traced with `jax.jit` through the JAX translation, computes
what the interpreter computes.

The cases are `rlx_xdsl.testing.op_cases`; each is one function jitted on its own
(tiny shapes keep XLA's compile cheap). The translation is the StableHLO export and
the autodiff oracle, so it must agree with the interpreter on every op.
"""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rlx_xdsl.context import make_context
from rlx_xdsl.conversions.mir_to_jax import jax_function
from rlx_xdsl.dialects.mir.regions import WhileOp
from rlx_xdsl.ir.graph import find_function
from rlx_xdsl.ir.source import parse_source
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.differential import assert_matches
from rlx_xdsl.testing.op_cases import all_cases, case_inputs, cases_module

CASES = all_cases()


@pytest.fixture(scope="module")
def module():
    return cases_module(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_matches_the_interpreter_under_jit(module, case):
    inputs = case_inputs(case, find_function(module, case.name))
    expected = run_function(module, case.name, inputs)
    got = jax.jit(jax_function(module, case.name))(*inputs)
    assert len(got) == len(expected)
    for index, (g, e) in enumerate(zip(got, expected)):
        assert_matches(np.asarray(g), e, case.approximate, f"@{case.name} output {index}")


def _float_arguments(inputs) -> list[int]:
    return [i for i, x in enumerate(inputs) if np.issubdtype(np.asarray(x).dtype, np.floating)]


def _unbounded_while(module, name) -> bool:
    return any(isinstance(op, WhileOp) and op.iteration_limit is None for op in find_function(module, name).walk())


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_op_is_reverse_differentiable(module, case):
    """`jax.vjp` traces every case (without compiling) with respect to its float arguments:
    the gradient oracle of autodiff. An unbounded `mir.while` is JAX's `while_loop`,
    which reverse mode refuses; its bounded form (`max_iterations`) is covered."""
    f = jax_function(module, case.name)
    inputs = case_inputs(case, find_function(module, case.name))
    floats = _float_arguments(inputs)
    if not floats:
        return
    if _unbounded_while(module, case.name):
        with pytest.raises(ValueError, match="Reverse-mode differentiation does not work"):
            jax.eval_shape(lambda *xs: jax.vjp(f, *xs)[1](f(*xs)), *inputs)
        return

    def of_floats(*xs):
        given = dict(zip(floats, xs))
        return f(*[given.get(i, a) for i, a in enumerate(inputs)])

    def pulled(*xs):
        outs, pullback = jax.vjp(of_floats, *xs)
        return pullback(outs)

    jax.eval_shape(pulled, *[inputs[i] for i in floats])


CUSTOM_FN = """func.func @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %y = mir.custom_fn (%x) : (tensor<3xf32>) -> tensor<3xf32> {
  ^bb0(%a: tensor<3xf32>):
    %s = mir.mul %a, %a : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    mir.yield %s : tensor<3xf32>
  } vjp {
  ^bb0(%a: tensor<3xf32>, %r: tensor<3xf32>, %d: tensor<3xf32>):
    %c = mir.constant dense<10.0> : tensor<f32>
    %g = mir.mul %d, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    mir.yield %g : tensor<3xf32>
  } jvp {
  ^bb0(%a: tensor<3xf32>, %r: tensor<3xf32>, %t: tensor<3xf32>):
    %c = mir.constant dense<7.0> : tensor<f32>
    %g = mir.mul %t, %c : (tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
    mir.yield %g : tensor<3xf32>
  }
  func.return %y : tensor<3xf32>
}"""


def test_custom_fn_is_differentiated_through_its_own_bodies():
    """Not `2x` (the forward's derivative): the vjp body in reverse mode, the jvp body in
    forward mode when asked for, and the jvp body in both modes when it is the only one."""
    module, _ = parse_source(make_context(), CUSTOM_FN, "<custom_fn>")
    x, ones = np.float32([1.0, 2.0, 3.0]), np.ones(3, np.float32)
    (y,) = jax_function(module, "f")(x)
    np.testing.assert_allclose(np.asarray(y), x * x)
    reverse = jax.grad(lambda x: jnp.sum(jax_function(module, "f")(x)[0]))(x)
    np.testing.assert_allclose(np.asarray(reverse), np.full(3, 10.0))
    _, (forward,) = jax.jvp(jax_function(module, "f", custom_rule="jvp"), (x,), (ones,))
    np.testing.assert_allclose(np.asarray(forward), np.full(3, 7.0))
    without_vjp = CUSTOM_FN[: CUSTOM_FN.index("} vjp")] + CUSTOM_FN[CUSTOM_FN.index("} jvp") :]
    only_jvp = jax_function(parse_source(make_context(), without_vjp, "<custom_jvp>")[0], "f")
    np.testing.assert_allclose(np.asarray(jax.jvp(only_jvp, (x,), (ones,))[1][0]), np.full(3, 7.0))
    np.testing.assert_allclose(np.asarray(jax.grad(lambda x: jnp.sum(only_jvp(x)[0]))(x)), np.full(3, 7.0))


@pytest.mark.parametrize(
    "uncapped",
    ["max_splat_steps = 0", "max_list_entries = 0", "transmittance_threshold = 1.000000e-04"],
)
def test_each_cut_off_of_the_capped_splat_case_shapes_its_image(uncapped):
    """The capped render case checks the formula's caps: lifting any one of them changes the
    image (in the interpreter and the formula alike), so none is compared vacuously."""
    from rlx_xdsl.testing.op_cases import OpCase

    (case,) = [c for c in CASES if c.name == "gaussian_splat_render_capped"]
    name = uncapped.split(" ")[0]
    lifted = OpCase("lifted", re.sub(rf"{name} = \S+", uncapped, case.text), inputs=case.inputs)
    assert lifted.text != case.text
    module = cases_module([case, lifted])
    inputs = case_inputs(case, find_function(module, case.name))
    (capped,) = run_function(module, case.name, inputs)
    (expected,) = run_function(module, "lifted", inputs)
    (got,) = jax.jit(jax_function(module, "lifted"))(*inputs)
    assert_matches(np.asarray(got), expected, True, "@lifted")
    assert np.abs(expected - capped).max() > 0.05
