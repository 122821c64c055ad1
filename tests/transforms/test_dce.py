"""`rlx-dce`: what it removes, what it must keep, and that one sweep suffices."""

from io import StringIO

import numpy as np
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, TensorType, f32
from xdsl.dialects.test import TestOp, TestPureOp
from xdsl.ir import Block, Operation, Region
from xdsl.passes import PassPipeline
from xdsl.printer import Printer

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.run import run_function
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.transforms import dce, get_all_passes
from rlx_xdsl.transforms.dce import DeadCodeEliminationPass, eliminate_dead_code

T = "tensor<4xf32>"


def parse(text: str) -> ModuleOp:
    return parse_module(text, ctx=make_context())  # scf and test are among the dialects tools read


def run_dce(module: ModuleOp) -> ModuleOp:
    DeadCodeEliminationPass().apply(Context(), module)
    module.verify()
    return module


def names(module: ModuleOp) -> list[str]:
    return [op.name for op in module.walk() if op.name not in ("builtin.module", "func.func")]


def text_of(module: ModuleOp) -> str:
    stream = StringIO()
    Printer(stream=stream).print_op(module)
    return stream.getvalue()


def test_removes_a_dead_chain_and_keeps_the_live_ops():
    module = parse(f"""
    func.func @f(%x: {T}) -> {T} {{
      %dead1 = mir.exp %x : ({T}) -> {T}
      %dead2 = mir.add %dead1, %x : ({T}, {T}) -> {T}
      %live = mir.relu %x : ({T}) -> {T}
      %dead3 = mir.neg %dead2 : ({T}) -> {T}
      func.return %live : {T}
    }}""")
    assert names(run_dce(module)) == ["mir.relu", "func.return"]


def test_keeps_unused_function_arguments():
    module = parse(f"""
    func.func @f(%x: {T}, %unused: tensor<2xf32>) -> {T} {{
      func.return %x : {T}
    }}""")
    function = run_dce(module).body.block.first_op
    assert isinstance(function, func.FuncOp)
    assert len(function.body.block.args) == 2
    assert len(function.function_type.inputs) == 2


def test_keeps_ops_with_unknown_effects_and_what_they_use():
    module = parse(f"""
    func.func @f(%x: {T}) -> {T} {{
      %used_by_effect = mir.neg %x : ({T}) -> {T}
      %unused_result = "test.op"(%used_by_effect) : ({T}) -> {T}
      func.return %x : {T}
    }}""")
    assert names(run_dce(module)) == ["mir.neg", "test.op", "func.return"]


def test_dead_region_op_with_a_pure_body_is_removed_with_its_inputs():
    module = parse(f"""
    func.func @f(%c: i1, %x: {T}) -> {T} {{
      %only_used_inside = mir.exp %x : ({T}) -> {T}
      %r = scf.if %c -> ({T}) {{
        %y = mir.sin %only_used_inside : ({T}) -> {T}
        scf.yield %y : {T}
      }} else {{
        scf.yield %x : {T}
      }}
      func.return %x : {T}
    }}""")
    assert names(run_dce(module)) == ["func.return"]


def test_region_op_with_an_impure_body_is_kept():
    module = parse(f"""
    func.func @f(%c: i1, %x: {T}) -> {T} {{
      %r = scf.if %c -> ({T}) {{
        "test.op"() : () -> ()
        scf.yield %x : {T}
      }} else {{
        scf.yield %x : {T}
      }}
      func.return %x : {T}
    }}""")
    assert "scf.if" in names(run_dce(module))


def test_declared_pure_region_op_with_an_impure_body_is_kept():
    """`test.pureop` claims Pure; only the one whose body is pure too may go."""
    t = TensorType(f32, [4])
    impure_body = TestPureOp(result_types=[t], regions=[Region(Block([TestOp()]))])
    pure_body = TestPureOp(result_types=[t], regions=[Region(Block([TestPureOp()]))])
    block = Block(arg_types=[t])
    block.add_ops([impure_body, pure_body, func.ReturnOp(block.args[0])])
    function = func.FuncOp("f", ([t], [t]), Region(block))
    assert eliminate_dead_code(function) == 1
    assert list(function.body.block.ops) == [impure_body, block.last_op]


def test_dead_ops_inside_a_live_region_are_removed():
    module = parse(f"""
    func.func @f(%p: tensor<1xi1>, %a: {T}) -> {T} {{
      %r = mir.if %p (%a) : (tensor<1xi1>, {T}) -> {T} {{
      ^bb0(%x: {T}):
        %dead = mir.exp %x : ({T}) -> {T}
        %live = mir.neg %x : ({T}) -> {T}
        mir.yield %live : {T}
      }} else {{
      ^bb0(%x: {T}):
        %dead = mir.cos %x : ({T}) -> {T}
        mir.yield %x : {T}
      }}
      func.return %r : {T}
    }}""")
    assert names(run_dce(module)) == ["mir.if", "mir.neg", "mir.yield", "mir.yield", "func.return"]


def test_dead_mir_while_is_removed():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    b.while_([x], lambda rb, v: rb.constant(np.array([True])), lambda rb, v: rb.neg(v), max_iterations=2)
    b.output(x)
    module = run_dce(b.module())
    assert names(module) == ["func.return"]


def test_every_function_is_cleaned():
    module = parse(f"""
    func.func @f(%x: {T}) -> {T} {{
      %d = mir.exp %x : ({T}) -> {T}
      func.return %x : {T}
    }}
    func.func @g(%x: {T}) -> {T} {{
      %d = mir.sin %x : ({T}) -> {T}
      func.return %x : {T}
    }}""")
    assert names(run_dce(module)) == ["func.return", "func.return"]


def test_one_reverse_sweep_visits_each_op_once(monkeypatch):
    """A chain of N dead ops dies in one sweep, asking about each op's effects once."""
    n = 500
    b = GraphBuilder("f")
    x = b.input("x", [4])
    value = x
    for _ in range(n):
        value = b.exp(value)
    b.output(x)
    module = b.module()

    calls: list[Operation] = []
    original = dce._own_effects_free

    def counting(op: Operation) -> bool:
        calls.append(op)
        return original(op)

    monkeypatch.setattr(dce, "_own_effects_free", counting)
    function = module.body.block.first_op
    assert eliminate_dead_code(function) == n
    assert len(calls) == n
    assert eliminate_dead_code(function) == 0


def test_the_pass_is_registered_and_parses_from_a_pipeline():
    assert get_all_passes()["rlx-dce"]() is DeadCodeEliminationPass
    pipeline = PassPipeline.parse_spec(get_all_passes(), "rlx-dce")
    assert isinstance(pipeline.passes[0], DeadCodeEliminationPass)
    assert DeadCodeEliminationPass.__doc__.splitlines()[0].strip()


# Generated graphs ----------------------------------------------------------------------


def live_ops(function: func.FuncOp) -> set[Operation]:
    """Independent oracle: ops reachable backwards from func.return (all MIR ops are pure)."""
    ret = function.body.block.last_op
    live, stack = {ret}, [ret]
    while stack:
        op = stack.pop()
        for operand in op.operands:
            owner = operand.owner
            if isinstance(owner, Operation) and owner not in live:
                live.add(owner)
                stack.append(owner)
    return live


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=14))
def test_dce_keeps_exactly_the_ops_that_reach_an_output(module):
    function = module.body.block.first_op
    expected = live_ops(function)
    n_before = len(list(function.body.block.ops))
    inputs = inputs_for(module)
    before = run_function(module, None, inputs)
    removed = eliminate_dead_code(function)
    module.verify()
    assert set(function.body.block.ops) == expected
    assert removed == n_before - len(expected)
    assert eliminate_dead_code(function) == 0  # nothing left for a second sweep
    for b, a in zip(before, run_function(module, None, inputs)):
        np.testing.assert_array_equal(a, b)


def test_printed_output_is_unchanged_when_nothing_is_dead():
    module = parse(f"""
    func.func @f(%x: {T}) -> {T} {{
      %0 = mir.exp %x : ({T}) -> {T}
      func.return %0 : {T}
    }}""")
    before = text_of(module)
    assert text_of(run_dce(module)) == before
