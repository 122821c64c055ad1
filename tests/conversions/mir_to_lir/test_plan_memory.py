"""`rlx-plan-memory`: the plans it writes, its options, and RLX's memory-plan tests."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import PassFailedException

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.conversions.mir_to_lir.plan_memory import STRATEGIES, PlanMemoryPass
from rlx_xdsl.conversions.mir_to_lir.report import svg_report, text_report
from rlx_xdsl.dialects.lir import plan_of
from rlx_xdsl.dialects.lir.attrs import ExternalAttr, PhaseAttr, SlotAttr, ViewAttr
from rlx_xdsl.dialects.lir.liveness import PlanError
from rlx_xdsl.ir.diagnostics import verify_located
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.graphgen import graphs
from rlx_xdsl.testing.llama import build_llama
from rlx_xdsl.testing.rlx_planner import rlx_plan
from rlx_xdsl.transforms.specialize import SpecializeShapesPass

SMALL_LLAMA = {"batch": 1, "seq": 4, "dim": 16, "n_heads": 2, "n_kv_heads": 1, "ffn": 32}


def plan(module: ModuleOp, **options) -> ModuleOp:
    PlanMemoryPass(**options).apply(Context(), module)
    verify_located(module)  # every plan the pass writes must pass the verifier
    return module


def figures(module: ModuleOp) -> dict[str, int]:
    p = plan_of(module.ops.first)
    assert p is not None
    return {
        "arena": p.arena_bytes.value.data,
        "naive": p.naive_bytes.value.data,
        "bound": p.lower_bound_bytes.value.data,
    }


def op_slots(module: ModuleOp) -> list:
    return [op.attributes.get("lir.slot") for op in list(module.ops.first.body.block.ops)[1:-1]]


# RLX's memory.rs tests --------------------------------------------------------------------


def test_sharing_temporaries_that_do_not_coexist_share_a_slot():
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    t1 = b.matmul(x, x)  # dies at the next matmul
    t2 = b.matmul(t1, x)  # born while t1 is read: another slot
    t3 = b.matmul(t2, x)  # t1 is dead by now: t3 reuses its slot
    b.output(t3)
    module = plan(b.module(), strategy="rlx")
    s1, s2, s3 = op_slots(module)
    assert s1.start != s2.start and s3.start == s1.start
    assert figures(module) == {"arena": 3 * 64, "naive": 4 * 64, "bound": 3 * 64}


def test_report_lists_every_buffer_with_its_offset_size_and_steps():
    b = GraphBuilder("f")
    x = b.input("x", [16])
    w = b.param("w", [16])
    b.output(b.add(b.exp(x), w))
    module = plan(b.module())
    report = text_report(plan_of(module.ops.first))
    lines = report.splitlines()
    assert lines[0] == "@f: arena 192 bytes, lower bound 192 (arena/bound 1.000), naive 256 (arena/naive 0.750)"
    assert "strategy first-fit; 4 buffers, 1 in place, 0 views, 0 external" in lines[1]
    rows = [line.split() for line in lines[3:]]
    assert rows == [
        ["0", "64", "0..3", "prologue", "%x", "input", '"x"'],
        ["64", "64", "0..3", "prologue", "%w", "param", '"w"'],
        ["128", "64", "1..2", "steady", "%0", "mir.exp"],
        ["128", "64", "2..3", "steady", "%1", "mir.add,", "in", "place", "over", "%0"],
    ]


def test_view_aliasing_reshape_cast_and_narrow_share_their_root():
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    t = b.exp(x)
    r = b.reshape(t, new_shape=[16])
    c = b.cast(r, "f32")  # same dtype: a view
    n = b.narrow(c, axis=0, start=8, len=4)  # 32 bytes in
    k = b.cast(n, "f16")  # another dtype: a new buffer
    b.output(b.neg(n), k)
    module = plan(b.module())
    slots = op_slots(module)
    root = slots[0]
    assert isinstance(root, SlotAttr)
    assert slots[1] == ViewAttr(root.start, 64, 0)
    assert slots[2] == ViewAttr(root.start, 64, 0)
    assert slots[3] == ViewAttr(root.start + 32, 16, 32)
    assert isinstance(slots[4], SlotAttr)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(graphs(max_ops=14))
def test_every_strategy_plans_random_graphs_and_auto_beats_or_ties_rlx(module):
    # RLX's "overlap" test checks that no two live buffers share bytes in one plan; here
    # every plan of every random graph goes through the verifier, which checks exactly that.
    text = str(module)
    _, rlx_arena = rlx_plan(parse_module(text).ops.first)
    arenas, chosen = {}, None
    for strategy in STRATEGIES:
        planned = plan(parse_module(text), strategy=strategy)
        arenas[strategy] = figures(planned)["arena"]
        assert figures(planned)["bound"] <= arenas[strategy] <= figures(planned)["naive"]
        if strategy == "auto":
            chosen = plan_of(planned.ops.first).strategy.data
    assert arenas["rlx"] == rlx_arena  # our implementation of RLX's planner is RLX's planner
    assert arenas["auto"] <= rlx_arena
    assert arenas["auto"] == min(arenas[s] for s in STRATEGIES if s != "auto")
    # `auto` keeps the first strategy (in STRATEGIES order) reaching the smallest arena.
    assert chosen == next(s for s in STRATEGIES if s != "auto" and arenas[s] == arenas["auto"])


def test_auto_beats_rlx_on_llama_and_reaches_the_lower_bound():
    module = build_llama(2, **SMALL_LLAMA)
    _, rlx_arena = rlx_plan(module.ops.first)
    for allocate_params in (True, False):
        planned = plan(build_llama(2, **SMALL_LLAMA), allocate_params=allocate_params)
        f = figures(planned)
        assert f["arena"] == f["bound"]
        if allocate_params:
            assert f["arena"] < rlx_arena


def test_lir_plan_includes_phases_and_the_io_manifest():
    # RLX compiler.rs `lir_plan_includes_phases_io_and_fingerprint` (no fingerprint here).
    module = plan(build_llama(1, **SMALL_LLAMA, vocab=8))
    function = module.ops.first
    ops = list(function.body.block.ops)[1:-1]
    assert all(isinstance(op.attributes.get("lir.phase"), PhaseAttr) for op in ops)
    assert all("lir.slot" in d.data for d in function.arg_attrs.data)
    names = [d.data["rlx.name"].data for d in function.arg_attrs.data]
    params = ["rlx.param" in d.data for d in function.arg_attrs.data]
    assert names[:3] == ["x", "cos", "sin"] and params[:3] == [False] * 3 and all(params[3:])
    (output,) = function.res_attrs.data
    returned = function.body.block.last_op.operands[0]
    assert output.data["lir.slot"] == returned.owner.attributes["lir.slot"]


def test_specializing_to_a_longer_sequence_grows_the_arena():
    # RLX tests/dynamic.rs: one dynamic graph, specialised to seq 8 and to seq 128.
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 32])
    b.output(b.matmul(b.silu(b.matmul(x, b.param("w1", [32, 64]))), b.param("w2", [64, 32])))
    text = str(b.module())
    with pytest.raises(PlanError, match=r"'func.func' argument #0 has dynamic type tensor<\?x32xf32>"):
        plan(parse_module(text))
    arenas = []
    for seq in (8, 128):
        module = parse_module(text)
        SpecializeShapesPass(shapes=(f"x={seq}x32",)).apply(Context(), module)
        arenas.append(figures(plan(module))["arena"])
    assert arenas[0] < arenas[1]


# Options -------------------------------------------------------------------------------------


def graph_with_everything() -> ModuleOp:
    b = GraphBuilder("f")
    x = b.input("x", [16])
    w = b.param("w", [16])
    c = b.constant(np.full(16, 2.0, np.float32))
    b.output(b.mul(b.add(x, w), b.reshape(c, new_shape=[16])))
    return b.module()


@pytest.mark.parametrize("option", ["allocate_inputs", "allocate_params", "allocate_constants"])
def test_values_left_out_of_the_arena_are_external(option):
    module = plan(graph_with_everything(), **{option: False})
    function = module.ops.first
    placements = {
        "allocate_inputs": function.arg_attrs.data[0].data["lir.slot"],
        "allocate_params": function.arg_attrs.data[1].data["lir.slot"],
        "allocate_constants": op_slots(module)[0],
    }
    for name, placement in placements.items():
        assert isinstance(placement, ExternalAttr) == (name == option)
    reshape_of_constant = op_slots(module)[2]
    assert isinstance(reshape_of_constant, ExternalAttr if option == "allocate_constants" else ViewAttr)


def test_alignment_sets_every_offset_and_the_arena():
    module = plan(graph_with_everything(), alignment=16)
    slots = [s for s in op_slots(module) if isinstance(s, SlotAttr)]
    assert all(s.start % 16 == 0 for s in slots)
    assert figures(module)["arena"] == 4 * 64  # x, w, c live throughout; add then mul in place
    module = plan(graph_with_everything(), alignment=256)
    assert figures(module)["arena"] == 4 * 256


def test_the_plan_names_its_strategy_and_replanning_replaces_the_plan():
    module = plan(graph_with_everything(), strategy="best-fit")
    assert plan_of(module.ops.first).strategy.data == "best-fit"
    once = str(module)
    plan(module, strategy="best-fit")
    assert str(module) == once
    plan(module, strategy="rlx", alignment=16)
    assert plan_of(module.ops.first).strategy.data == "rlx"
    assert "in_place" not in str(module) and "alignment = 16" in str(module)
    assert len([op for op in module.ops.first.body.block.ops if op.name == "lir.plan"]) == 1


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (
            {"strategy": "worst-fit"},
            "unknown strategy 'worst-fit' \\(expected one of: auto, first-fit, best-fit, longest-first, "
            "earliest-first, latest-first, rlx\\)",
        ),
        ({"alignment": 48}, "alignment must be a power of two, got 48"),
    ],
)
def test_bad_options_are_reported(options, message):
    with pytest.raises(PassFailedException, match=message):
        PlanMemoryPass(**options).apply(Context(), graph_with_everything())


def test_an_elementwise_chain_runs_in_one_slot_and_a_matmul_never_in_place():
    b = GraphBuilder("f")
    x = b.input("x", [4, 4])
    h = b.neg(b.tanh(b.exp(b.matmul(x, x))))
    b.output(b.matmul(h, h))
    module = plan(b.module(), strategy="first-fit")
    mm, e, t, n, mm2 = op_slots(module)
    assert e == t == n == SlotAttr(mm.start, 64, True) and not mm.writes_in_place
    assert not mm2.writes_in_place and mm2.start != n.start


def test_report_and_svg_options_write_files(tmp_path):
    PlanMemoryPass(report=str(tmp_path / "plan.txt"), svg=str(tmp_path / "plan.svg")).apply(
        Context(), graph_with_everything()
    )
    assert (tmp_path / "plan.txt").read_text().startswith("@f: arena ")
    svg = (tmp_path / "plan.svg").read_text()
    assert svg.startswith("<svg") and svg.count("<rect") == 1 + 5  # the frame, and x, w, the constant, add, mul


def test_svg_draws_one_panel_per_function():
    function = str(graph_with_everything().ops.first)
    module = plan(parse_module(function + "\n" + function.replace("@f", "@g")))
    svg = svg_report([plan_of(f) for f in module.ops])
    assert "@f: arena" in svg and "@g: arena" in svg
