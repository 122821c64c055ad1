"""Running planned functions on one arena: the same results as MIR, bit for bit, and a real arena.

LIR runs the same kernels as the MIR interpreter, so its outputs must equal
MIR's exactly (same dtype, shape and bytes, NaN payloads included) whenever the
plan is right; a plan that makes two live buffers share bytes must change them.
"""

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects import func

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.conversions.mir_to_lir.plan_memory import PlanMemoryPass
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.dialects.lir.attrs import SlotAttr
from rlx_xdsl.interpreters import KERNELS, YIELDS
from rlx_xdsl.interpreters.lir import ArenaRun, ArenaRunError
from rlx_xdsl.ir.graph import argument_names, random_inputs
from rlx_xdsl.ir.source import SourceError, parse_source, split_chunks
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC, is_static
from rlx_xdsl.testing.corpus import lit_inputs
from rlx_xdsl.testing.graphgen import graphs, inputs_for
from rlx_xdsl.testing.llama import build_llama, rope_tables
from rlx_xdsl.transforms.specialize import SpecializeShapesPass

LIT = Path(__file__).parents[2] / "lit_tests"


def identical(expected: list[np.ndarray], actual: list[np.ndarray]) -> bool:
    return len(expected) == len(actual) and all(
        e.dtype == a.dtype and e.shape == a.shape and e.tobytes() == a.tobytes() for e, a in zip(expected, actual)
    )


def planned(text: str, **options):
    module = parse_module(text)
    PlanMemoryPass(**options).apply(Context(), module)
    module.verify()
    return module


OPTION_SETS = [
    {},
    {"strategy": "best-fit", "alignment": 16},
    {"strategy": "rlx", "allocate_params": False, "allocate_inputs": False, "allocate_constants": False},
]


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=14))
def test_random_graphs_give_mir_results_exactly(module):
    inputs = inputs_for(module)
    expected = run_function(module, None, inputs)
    for options in OPTION_SETS:
        assert identical(expected, run_function(planned(str(module), **options), None, inputs)), options


@pytest.mark.parametrize("allocate_params", [True, False])
def test_the_llama_graph_gives_mir_results_exactly(allocate_params):
    config = {"batch": 2, "seq": 8, "dim": 32, "n_heads": 4, "n_kv_heads": 2, "ffn": 64}
    module = build_llama(3, **config, vocab=16)
    inputs = random_inputs(module.ops.first, seed=3)
    inputs[1], inputs[2] = rope_tables(config["seq"], config["dim"] // config["n_heads"])
    inputs = [x if i < 3 else (0.2 * x).astype(x.dtype) for i, x in enumerate(inputs)]
    expected = run_function(module, "llama", inputs)
    lir = planned(str(module), allocate_params=allocate_params)
    assert identical(expected, run_function(lir, "llama", inputs))


# Every example in the lit tests ------------------------------------------------------------


def _static(f: func.FuncOp) -> func.FuncOp | None:
    """`f` with every `?` argument dim bound to 2 (rlx-specialize), or None if that is not valid."""
    bindings = []
    for name, arg in zip(argument_names(f), f.body.block.args):
        shape = getattr(arg.type, "get_shape", lambda: None)()
        if shape is None:
            return None
        if not is_static(shape):
            bindings.append(f"{name}=" + "x".join("2" if d == DYNAMIC else str(d) for d in shape))
    module = parse_module(str(f))
    try:
        SpecializeShapesPass(shapes=tuple(bindings)).apply(Context(), module)
        module.verify()
    except Exception:
        return None
    static = module.ops.first
    values = [*static.body.block.args, *(r for op in static.body.block.ops for r in op.results)]
    return static if all(is_static(getattr(v.type, "get_shape", lambda: [DYNAMIC])()) for v in values) else None


def _runnable(f: func.FuncOp) -> bool:
    return all(type(op) in KERNELS or type(op) in YIELDS or op.name == "func.return" for op in f.walk() if op is not f)


def _lit_functions():
    """(name, function text) for each function of the lit tests that MIR can run and LIR can plan
    (dynamic argument dims bound to 2)."""
    found = []
    for path in lit_inputs():
        for chunk, offset in split_chunks(path.read_text()):
            try:
                module, _ = parse_source(make_context(), chunk, path.name, line_offset=offset)
            except SourceError:
                continue  # a negative test: this chunk is meant to fail
            for f in module.ops:
                if not isinstance(f, func.FuncOp) or f.is_declaration or plan_of(f) is not None or not _runnable(f):
                    continue
                static = _static(f)
                if static is not None:
                    found.append((f"{path.relative_to(LIT)}:{f.sym_name.data}", str(static)))
    return found


LIT_FUNCTIONS = _lit_functions()


def test_the_lit_examples_are_many():
    assert len(LIT_FUNCTIONS) >= 50, [name for name, _ in LIT_FUNCTIONS]


@pytest.mark.parametrize("text", [t for _, t in LIT_FUNCTIONS], ids=[n for n, _ in LIT_FUNCTIONS])
def test_every_lit_example_gives_mir_results_exactly(text):
    module = parse_module(text)
    f = module.ops.first
    inputs = random_inputs(f, seed=5)
    try:
        expected = run_function(module, None, inputs)
    except Exception as e:
        with pytest.raises(ArenaRunError):
            run_function(planned(text), None, inputs)
        assert str(e)
        return
    for options in OPTION_SETS:
        assert identical(expected, run_function(planned(text, **options), None, inputs)), options


# The arena is real ----------------------------------------------------------------------------


def chain() -> str:
    """t = exp(x); u = neg(x); out = t + u: t and u are live together."""
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    b.output(b.add(b.exp(x), b.neg(x)))
    return str(b.module())


def test_every_slot_is_a_view_of_the_one_arena():
    module = planned(chain())
    f = module.ops.first
    run = ArenaRun(module, f)
    outputs = run.run([np.ones((4, 4), np.float32)])
    assert run.arena.nbytes == plan_of(f).arena_bytes.value.data
    for value, array in run.values.items():
        assert np.shares_memory(array, run.arena), value
    assert not np.shares_memory(outputs[0], run.arena)  # outputs are copied out


def test_a_corrupted_plan_is_rejected_and_computes_garbage_when_run_anyway():
    module = planned(chain())
    exp, neg = list(module.ops.first.body.block.ops)[1:3]
    assert exp.attributes["lir.slot"] != neg.attributes["lir.slot"]
    neg.attributes["lir.slot"] = exp.attributes["lir.slot"]  # u overwrites t while t is live
    corrupted = str(module)
    with pytest.raises(SourceError) as caught:
        parse_source(make_context(), corrupted, "corrupted.mlir")
    message = caught.value.diagnostic.message
    assert message.startswith("'lir.plan' %1 [") and "overlaps %0 [" in message
    assert "while both are live at step 2" in message
    assert corrupted.splitlines()[caught.value.diagnostic.pos.line - 1].lstrip().startswith("%1 = mir.neg")

    unverified, _ = parse_source(make_context(), corrupted, "corrupted.mlir", verify=False)
    x = np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4)
    right = np.exp(x) + -x
    (wrong,) = run_function(unverified, None, [x])
    assert not np.allclose(wrong, right)
    np.testing.assert_array_equal(wrong, -x + -x)  # exp(x) was overwritten by -x before the add read it
    (fine,) = run_function(planned(chain()), None, [x])
    np.testing.assert_array_equal(fine, right)


def test_inputs_must_match_the_argument_types():
    module = planned(chain())
    with pytest.raises(ValueError, match=r"argument #0 is float64\[4, 4\], but its slot holds float32\[4, 4\]"):
        ArenaRun(module, module.ops.first).run([np.ones((4, 4))])


def test_a_kernel_failure_is_reported_at_its_op():
    b = GraphBuilder("f")
    table = b.input("t", [4, 2])
    ids = b.input("i", [3], "i64")
    b.output(b.gather(table, ids, axis=0))
    module = planned(str(b.module()))
    with pytest.raises(ArenaRunError) as caught:
        run_function(module, None, [np.ones((4, 2), np.float32), np.array([0, 1, 9])])
    assert caught.value.op.name == "mir.gather"
    assert "out of range" in str(caught.value.cause)


def test_regions_run_outside_the_arena_on_the_reference_interpreter():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    p = b.input("p", [1], "i1")
    r = b.if_(p, [b.exp(x)], lambda rb, v: [rb.neg(v)], lambda rb, v: [rb.tanh(v)])
    limit = b.constant(np.array([100.0], np.float32))

    def small(rb, v, bound):
        return [rb.compare(rb.reduce(rb.abs(v), kind="sum", axes=[0], keep_dim=True), bound, "lt")]

    w, _ = b.while_([r, limit], small, lambda rb, v, bound: [rb.add(v, rb.abs(v)), bound], max_iterations=50)
    b.output(b.add(w, x))
    text = str(b.module())
    module = planned(text)
    for pred in (True, False):
        inputs = [np.array([0.5, -1.0, 2.0, 0.0], np.float32), np.array([pred])]
        expected = run_function(parse_module(text), None, inputs)
        assert identical(expected, run_function(module, None, inputs))


def test_a_function_without_a_plan_cannot_run_on_an_arena():
    module = parse_module(chain())
    with pytest.raises(ValueError, match="has no memory plan"):
        ArenaRun(module, module.ops.first)


def test_views_are_the_bytes_of_their_root():
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    t = b.exp(x)
    n = b.narrow(b.reshape(t, new_shape=[16]), axis=0, start=4, len=8)
    b.output(b.neg(n))
    module = planned(str(b.module()))
    f = module.ops.first
    run = ArenaRun(module, f)
    run.run([np.ones((4, 4), np.float32)])
    ops = list(f.body.block.ops)
    t_array, n_array = run.values[ops[1].results[0]], run.values[ops[3].results[0]]
    assert isinstance(ops[1].attributes["lir.slot"], SlotAttr)
    assert n_array.__array_interface__["data"][0] == t_array.__array_interface__["data"][0] + 16
