"""Live ranges, in-place candidates, the lower bound and phases, against hand-derived values.

Steps: the arguments arrive at step 0, the top-level ops are steps 1..N in
program order, `func.return` is step N+1. Every expected number below is worked
out by hand in the comment next to it.
"""

import numpy as np
import pytest

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.conversions.mir_to_lir.plan_memory import Options, choose_roles
from rlx_xdsl.dialects.lir.attrs import Phase
from rlx_xdsl.dialects.lir.liveness import (
    Kind,
    Layout,
    PlanError,
    Role,
    Schedule,
    derive_phases,
    live_bytes,
    lower_bound_bytes,
    naive_bytes,
)
from rlx_xdsl.shapes import DYNAMIC


def analyse(b: GraphBuilder, options: Options = Options()):
    function = b.function()
    schedule = Schedule.of(function)
    return schedule, Layout.of(schedule, choose_roles(schedule, options))


def index(schedule, value):
    return schedule.index[value]


def test_arguments_and_constants_live_throughout_and_temporaries_from_birth_to_last_read():
    b = GraphBuilder("f")
    x = b.input("x", [4])  # step 0
    w = b.param("w", [4])  # step 0
    c = b.constant(np.ones(4, np.float32))  # step 1
    t = b.add(x, w)  # step 2, read at 3 and 4
    u = b.mul(t, c)  # step 3, read at 4
    dead = b.exp(x)  # step 4, never read
    b.output(b.sub(u, t))  # step 5, output read by the return at 6
    schedule, layout = analyse(b)
    assert schedule.end == 6
    kinds = {v: schedule.values[index(schedule, v)].kind for v in (x, w, c, t)}
    assert kinds == {x: Kind.INPUT, w: Kind.PARAM, c: Kind.CONSTANT, t: Kind.RESULT}
    spans = {name: (layout.birth[index(schedule, v)], layout.death[index(schedule, v)])
             for name, v in {"x": x, "w": w, "c": c, "t": t, "u": u, "dead": dead}.items()}
    assert spans == {"x": (0, 6), "w": (0, 6), "c": (0, 6), "t": (2, 5), "u": (3, 5), "dead": (4, 4)}
    out = schedule.outputs[0]
    assert (layout.birth[out], layout.death[out]) == (5, 6)


def test_reads_through_views_keep_the_root_alive():
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    t = b.exp(x)  # step 1
    r = b.reshape(t, new_shape=[8])  # step 2: a view of t
    n = b.narrow(r, axis=0, start=4, len=4)  # step 3: a view of t, 16 bytes in
    other = b.neg(b.reshape(x, new_shape=[8]))  # steps 4, 5
    b.output(b.add(n, b.narrow(other, axis=0, start=0, len=4)))  # steps 6, 7 (reads n)
    schedule, layout = analyse(b)
    ti, ri, ni = (index(schedule, v) for v in (t, r, n))
    assert layout.roles[ti] is Role.BUFFER and layout.roles[ri] is Role.VIEW and layout.roles[ni] is Role.VIEW
    assert layout.root[ni] == ti and layout.byte_offset[ni] == 16
    assert (layout.birth[ti], layout.death[ti]) == (1, 7)  # n is read at step 7


def test_region_bodies_read_at_the_step_of_their_op():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    p = b.input("p", [1], "i1")
    t = b.exp(x)  # step 1
    r = b.if_(p, [t], lambda rb, v: [rb.neg(v)], lambda rb, v: [v])  # step 2
    b.output(b.add(r, x))  # step 3
    schedule, layout = analyse(b)
    ti = index(schedule, t)
    assert (layout.birth[ti], layout.death[ti]) == (1, 2)
    assert len(schedule.ops) == 3  # the ops inside the regions are not steps


def test_options_leave_values_outside_the_arena():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    w = b.param("w", [2, 2])
    c = b.constant(np.ones(4, np.float32))
    b.output(b.add(b.add(x, b.reshape(w, new_shape=[4])), c))
    schedule, layout = analyse(b, Options(allocate_params=False, allocate_constants=False))
    roles = [layout.roles[i] for i in range(len(schedule.values))]
    # x, w, c, reshape(w), add, add
    assert roles == [Role.BUFFER, Role.EXTERNAL, Role.EXTERNAL, Role.EXTERNAL, Role.BUFFER, Role.BUFFER]


def test_an_elementwise_op_may_overwrite_an_operand_that_dies_there():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    t = b.exp(x)  # step 1
    u = b.neg(t)  # step 2: t dies here, same shape and dtype
    v = b.matmul(b.reshape(u, new_shape=[2, 2]), b.reshape(u, new_shape=[2, 2]))  # steps 3-5: no in place
    w = b.add(v, b.reshape(u, new_shape=[2, 2]))  # steps 6-7: u still read here, v dies here
    b.output(w)
    schedule, layout = analyse(b)
    ui, vi, wi = (index(schedule, val) for val in (u, v, w))
    assert layout.in_place[ui] == [index(schedule, t)]
    assert vi not in layout.in_place  # matmul does not write in place
    # add reads v (dies at 7) and u through a view (dies at 7): both are whole buffers of the result's type
    assert layout.in_place[wi] == [vi, ui]


def test_no_in_place_over_inputs_values_still_read_or_broadcast_operands():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    s = b.input("s", [1])
    over_input = b.exp(x)  # x lives throughout
    t = b.exp(s)  # [1], broadcast into add's [4] result
    keep = b.neg(over_input)
    read_later = b.add(keep, t)  # t dies here but has another shape; keep is read again below
    b.output(b.mul(read_later, keep))
    schedule, layout = analyse(b)
    assert index(schedule, over_input) not in layout.in_place
    assert index(schedule, read_later) not in layout.in_place


def test_another_operand_reading_the_buffer_differently_forbids_in_place():
    b = GraphBuilder("f")
    x = b.input("x", [2, 2])
    t = b.exp(x)  # step 1, dies at step 4
    row = b.narrow(b.reshape(t, new_shape=[4]), axis=0, start=0, len=2)  # t's first row, as [2]
    # Writing t + row over t would overwrite t[0] (in row 0) before row 1 reads it.
    total = b.add(t, row)
    b.output(total)
    schedule, layout = analyse(b)
    assert layout.death[index(schedule, t)] == schedule.step_of(total.owner)
    assert index(schedule, total) not in layout.in_place
    # Without the second reader the same add may write over t.
    b2 = GraphBuilder("g")
    t2 = b2.exp(b2.input("x", [2, 2]))
    total2 = b2.add(t2, b2.input("y", [2]))
    b2.output(total2)
    schedule2, layout2 = analyse(b2)
    assert layout2.in_place[index(schedule2, total2)] == [index(schedule2, t2)]


def test_lower_bound_and_naive_bytes():
    b = GraphBuilder("f")
    x = b.input("x", [16])  # 64 bytes, live 0..4
    t = b.exp(x)  # 64 bytes, live 1..2
    u = b.neg(t)  # in place over t: counted from step 3, live 2..3
    y = b.matmul(b.reshape(u, new_shape=[4, 4]), b.reshape(u, new_shape=[4, 4]))  # step 5, live 5..6
    b.output(b.reshape(y, new_shape=[16]))
    schedule, layout = analyse(b)
    # steps:      0    1    2    3    4    5    6    7
    # x          64   64   64   64   64   64   64   64
    # t               64   64
    # u                         64   64   64
    # y                                   64   64   64
    assert live_bytes(layout, 64) == [64, 128, 128, 128, 128, 192, 128, 128]
    assert lower_bound_bytes(layout, 64) == 192
    assert naive_bytes(layout, 64) == 4 * 64
    # With 256-byte alignment every buffer takes 256 bytes.
    assert lower_bound_bytes(layout, 256) == 3 * 256


def test_dynamic_shapes_are_rejected_at_the_value():
    b = GraphBuilder("f")
    x = b.input("x", [DYNAMIC, 4])
    b.output(b.exp(x))
    with pytest.raises(PlanError, match=r"argument #0 has dynamic type tensor<\?x4xf32>: .*rlx-specialize"):
        Schedule.of(b.function())


# Phases (RLX's derive_phases) ------------------------------------------------------------


def phases_of(b: GraphBuilder) -> list[str]:
    schedule = Schedule.of(b.function())
    return [phase.value for phase in derive_phases(schedule)]


def test_constants_are_prologue_and_what_follows_the_last_compute_op_is_epilogue():
    b = GraphBuilder("f")
    x = b.input("x", [2, 2])
    c = b.constant(np.ones((2, 2), np.float32))  # prologue, wherever it appears
    m = b.matmul(b.add(x, c), x)  # add, matmul: steady
    b.output(b.exp(m))  # exp: epilogue
    assert phases_of(b) == ["prologue", "steady", "steady", "epilogue"]


def test_topk_is_epilogue_and_so_is_everything_after_it():
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    h = b.matmul(x, b.param("w", [4, 4]))  # steady (the last compute op)
    values, indices = b.topk(h, k=2)  # epilogue
    b.output(b.exp(values), indices)  # epilogue
    assert phases_of(b) == ["steady", "epilogue", "epilogue"]
    assert Phase("epilogue") is Phase.EPILOGUE


def test_a_topk_before_the_last_compute_op_still_ends_the_steady_state():
    b = GraphBuilder("f")
    x = b.input("x", [2, 4])
    values, _ = b.topk(x, k=2)  # epilogue
    after = b.exp(values)  # after the last sampling op: epilogue
    b.output(b.matmul(after, b.param("w", [2, 2])))  # a compute op, but after top-k: epilogue
    assert phases_of(b) == ["epilogue", "epilogue", "epilogue"]


def test_without_compute_or_sampling_ops_everything_is_steady():
    b = GraphBuilder("f")
    x = b.input("x", [4])
    b.output(b.neg(b.exp(x)))
    assert phases_of(b) == ["steady", "steady"]


def test_a_region_op_holding_a_compute_op_counts_as_compute():
    b = GraphBuilder("f")
    x = b.input("x", [2, 2])
    p = b.input("p", [1], "i1")
    r = b.if_(p, [x], lambda rb, v: [rb.matmul(v, v)], lambda rb, v: [v])
    b.output(b.exp(r))
    assert phases_of(b) == ["steady", "epilogue"]
