"""The random MIR graph generator, and properties every generated graph must have.

Graphs from `graphgen.graphs()` must verify, survive printing and parsing in
both the custom and the generic form, run in the reference interpreter with
outputs of their declared types, and keep their outputs under `rlx-dce`.
"""

from io import StringIO

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.printer import Printer

from rlx_xdsl import dtypes
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir import MIR
from rlx_xdsl.dialects.mir.elementwise import (
    AddOp,
    DivOp,
    LogOp,
    PowOp,
    RsqrtOp,
    SqrtOp,
)
from rlx_xdsl.dialects.mir.regions import IfOp, YieldOp
from rlx_xdsl.run import run_function
from rlx_xdsl.testing import graphgen
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def print_ir(module: ModuleOp, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue()


def op_classes(module: ModuleOp) -> set[type]:
    return {type(op) for op in module.walk()}


# Coverage of the mir dialect --------------------------------------------------------


def test_every_mir_op_has_a_recipe():
    """Only mir.yield is left out (a terminator): it ends the mir.if/mir.while recipes' bodies."""
    assert [op for op in MIR.operations if not graphgen.needs_recipe(op)] == [YieldOp]
    assert graphgen.missing_recipes() == []


def test_graphs_draw_from_every_mir_op_with_a_recipe():
    needed = {op for op in MIR.operations if graphgen.needs_recipe(op)}
    assert set(graphgen.available_ops()) == needed


@pytest.mark.parametrize("op", graphgen.available_ops(), ids=lambda op: op.name)
def test_each_recipe_emits_its_op(op):
    """A recipe that always declined would silently drop its op from every test. Drawing
    stops at the first graph holding the op (`find` raises after 20 without one)."""

    def emits(module) -> bool:
        module.verify()
        return op in op_classes(module)

    once = settings(max_examples=20, deadline=None, database=None, phases=[Phase.generate])
    find(graphs(max_ops=3, ops=[op]), emits, settings=once)


def test_ops_without_a_recipe_are_rejected():
    with pytest.raises(ValueError, match="no graphgen recipe for: mir.yield"):
        graphs(ops=[AddOp, YieldOp])


def test_ops_are_given_as_classes_not_names():
    with pytest.raises(TypeError, match="takes op classes, got 'add'"):
        graphs(ops=["add"])


@settings(max_examples=10, deadline=None)
@given(graphs(max_ops=4))
def test_inputs_are_deterministic_per_seed(module):
    first, again, other = inputs_for(module, 3), inputs_for(module, 3), inputs_for(module, 4)
    for a, b in zip(first, again):
        np.testing.assert_array_equal(a, b)
    assert any(not np.array_equal(a, b) for a, b in zip(first, other))


@PROPERTY
@given(graphs(max_ops=8, ops=[LogOp, SqrtOp, RsqrtOp, DivOp, PowOp]))
def test_domain_guards_keep_values_finite(module):
    """log/sqrt/rsqrt/div/pow get `abs(x) + 1` operands, so finite inputs stay finite."""
    for out in run_function(module, None, inputs_for(module)):
        assert np.all(np.isfinite(out.astype(np.float64)))


def test_if_predicates_are_sometimes_true_and_sometimes_false():
    """Generated predicates depend on the data, so both branches of `mir.if` get run."""
    outcomes: set[bool] = set()

    @settings(max_examples=40, deadline=None, database=None, phases=[Phase.generate])
    @given(graphs(max_ops=3, ops=[IfOp]))
    def collect(module):
        function = next(op for op in module.ops if isinstance(op, func.FuncOp))
        predicates = [op.pred for op in function.body.block.ops if isinstance(op, IfOp)]
        ret = function.body.block.last_op
        ret.operands = [*ret.operands, *predicates]  # also return every predicate
        function.update_function_type()
        outputs = run_function(module, None, inputs_for(module))
        outcomes.update(bool(p.reshape(()) != 0) for p in outputs[len(outputs) - len(predicates) :])

    collect()
    assert outcomes == {True, False}


# Properties of generated graphs ---------------------------------------------------------


@PROPERTY
@given(graphs(max_ops=12))
def test_graph_verifies_and_print_parse_print_is_a_fixed_point(module):
    module.verify()
    text = print_ir(module)
    reparsed = parse_module(text)
    reparsed.verify()
    assert print_ir(reparsed) == text


@PROPERTY
@given(graphs(max_ops=12))
def test_generic_and_custom_forms_parse_to_the_same_ir(module):
    from_custom = parse_module(print_ir(module))
    from_generic = parse_module(print_ir(module, generic=True))
    assert from_generic.is_structurally_equivalent(from_custom)
    assert print_ir(from_generic) == print_ir(from_custom)


@PROPERTY
@given(graphs(max_ops=12))
def test_interpreter_outputs_have_the_declared_types(module):
    function = next(op for op in module.ops if isinstance(op, func.FuncOp))
    outputs = run_function(module, None, inputs_for(module))
    declared = function.function_type.outputs.data
    assert len(outputs) == len(declared)
    for out, t in zip(outputs, declared):
        assert out.shape == tuple(t.get_shape())
        assert out.dtype == dtypes.numpy_dtype(t.element_type)


@PROPERTY
@given(graphs(max_ops=12))
def test_dce_preserves_interpreter_outputs(module):
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    DeadCodeEliminationPass().apply(Context(), module)
    module.verify()
    after = run_function(module, None, inputs)
    assert len(before) == len(after)
    for b, a in zip(before, after):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)  # NaNs in the same places count as equal
