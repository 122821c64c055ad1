"""mir.if / mir.while / mir.yield: interpreter against plain-Python control flow, effects, verifier."""

from pathlib import Path

import numpy as np
import pytest
from xdsl.context import Context
from xdsl.dialects.test import TestOp
from xdsl.traits import is_side_effect_free
from xdsl.transforms.dead_code_elimination import (
    DeadCodeElimination,
    would_be_trivially_dead,
)
from xdsl.utils.exceptions import VerifyException

from rlx_xdsl import dtypes
from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.context import parse_module
from rlx_xdsl.dialects.mir.regions import IfOp, WhileOp, YieldOp
from rlx_xdsl.dialects.traits import Precision, precision_class
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC
from rlx_xdsl.testing.expected_errors import expected_error_test

INVALID = Path(__file__).parents[3] / "lit_tests/dialects/mir/invalid-regions.mlir"
X = np.array([1.5, -2.0, 0.25, 4.0], np.float32)


def build(fn, *arg_specs):
    """A verified module `f(args) = fn(b, *args)`; arg_specs are (shape, dtype) pairs."""
    b = GraphBuilder("f")
    args = [b.input(f"a{i}", shape, dtype) for i, (shape, dtype) in enumerate(arg_specs)]
    out = fn(b, *args)
    b.output(*(out if isinstance(out, tuple) else (out,)))
    module = b.module()
    module.verify()
    return module


def run(module, *inputs):
    return run_function(module, "f", [np.asarray(x) for x in inputs])


# mir.if ---------------------------------------------------------------------------


def scale_or_negate(b, pred, x, y):
    """if pred: (x + y, y) else: (-x, x), as a two-result mir.if."""
    return b.if_(pred, [x, y], lambda rb, u, v: (rb.add(u, v), v), lambda rb, u, v: (rb.neg(u), u))


def python_scale_or_negate(pred, x, y):
    if pred:
        return x + y, y
    return -x, x


@pytest.mark.parametrize(
    ("pred", "dtype", "shape"),
    [(True, "i1", [1]), (False, "i1", [1]), (1.0, "f32", []), (0.0, "f32", []),
     (-3, "i32", [1, 1]), (0, "i32", [1, 1]), (np.nan, "f64", [1])],
)  # fmt: skip
def test_if_matches_python(pred, dtype, shape):
    module = build(scale_or_negate, (shape, dtype), ([4], "f32"), ([4], "f32"))
    y = np.float32([1, 2, 3, 4])
    np_pred = np.full(shape, pred, dtype=dtypes.dtype_named(dtype).numpy)
    got = run(module, np_pred, X, y)
    expected = python_scale_or_negate(pred != 0, X, y)  # nonzero (NaN included) is true
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g, e)
        assert g.dtype == np.float32


def test_if_without_captures_builds_values_in_its_regions():
    def fn(b, p):
        return b.if_(p, [], lambda rb: rb.constant([1, 2], "i32"), lambda rb: rb.constant([7, 8], "i32"))

    module = build(fn, ([], "i1"))
    np.testing.assert_array_equal(run(module, np.array(True))[0], [1, 2])
    np.testing.assert_array_equal(run(module, np.array(False))[0], [7, 8])


def test_if_rejects_a_multi_element_predicate_at_run_time():
    module = build(scale_or_negate, ([DYNAMIC], "i1"), ([4], "f32"), ([4], "f32"))
    with pytest.raises(Exception, match="a predicate must have exactly one element"):
        run(module, np.array([True, False]), X, X)


# mir.while --------------------------------------------------------------------------


def doubling_loop(b, x, limit, max_iterations=None):
    """(x, k) = (x, 0); while k < limit: (x, k) = (2x, k + 1)."""
    k0 = b.constant(np.float32([0]))

    def cond(rb, v, k):
        return rb.compare(k, rb.constant(np.float32([limit])), predicate="lt")

    def body(rb, v, k):
        return rb.mul(v, rb.constant(np.float32(2))), rb.add(k, rb.constant(np.float32([1])))

    return b.while_([x, k0], cond, body, max_iterations=max_iterations)


def python_doubling(x, limit, max_iterations=None):
    v, k, steps = x.copy(), 0.0, 0
    while k < limit and (max_iterations is None or steps < max_iterations):
        v, k, steps = v * 2, k + 1, steps + 1
    return v, k


@pytest.mark.parametrize(
    ("limit", "max_iterations"),
    [(3, None), (0, None), (3, 10), (10, 4), (5, 5), (1, 1)],
)
def test_while_matches_python(limit, max_iterations):
    module = build(lambda b, x: doubling_loop(b, x, limit, max_iterations), ([4], "f32"))
    v, k = run(module, X)
    ev, ek = python_doubling(X, limit, max_iterations)
    np.testing.assert_array_equal(v, ev)
    np.testing.assert_array_equal(k, [ek])


def halve(rb, n):
    return rb.div(n, rb.constant(np.int64([2])))


def triple_plus_one(rb, n):
    return rb.add(rb.mul(n, rb.constant(np.int64([3]))), rb.constant(np.int64([1])))


def test_while_counts_collatz_steps_with_a_nested_if():
    """while n != 1: n = n / 2 if n even else 3n + 1; steps += 1 (i64, Rust-style division)."""

    def fn(b, n0):
        steps0 = b.constant(np.int64([0]))

        def cond(rb, n, steps):
            return rb.compare(n, rb.constant(np.int64([1])), predicate="ne")

        def body(rb, n, steps):
            two = rb.constant(np.int64([2]))
            odd_part = rb.sub(n, rb.mul(rb.div(n, two), two))  # n mod 2, from truncating division
            is_odd = rb.compare(odd_part, rb.constant(np.int64([0])), predicate="ne")
            nxt = rb.if_(is_odd, [n], triple_plus_one, halve)
            return nxt, rb.add(steps, rb.constant(np.int64([1])))

        return b.while_([n0, steps0], cond, body)

    module = build(fn, ([1], "i64"))
    for start in (1, 6, 7, 27):
        n, steps = start, 0
        while n != 1:
            n, steps = (3 * n + 1 if n % 2 else n // 2), steps + 1
        got_n, got_steps = run(module, np.int64([start]))
        assert got_n.tolist() == [1] and got_steps.tolist() == [steps]


def test_while_round_trips_through_text():
    module = build(lambda b, x: doubling_loop(b, x, 3, 8), ([4], "f32"))
    reparsed = parse_module(str(module))
    reparsed.verify()
    assert str(reparsed) == str(module)
    np.testing.assert_array_equal(run(reparsed, X)[0], X * 8)
    (f,) = reparsed.ops
    (loop,) = [op for op in f.walk() if isinstance(op, WhileOp)]
    assert loop.iteration_limit == 8


# Effects, traits and builder ----------------------------------------------------------


def unused_region_op(kind: str, extra_op=None):
    """A graph returning `x` next to an unused `mir.if`/`mir.while`; `extra_op()` goes in a region."""

    def body(rb, x):
        if extra_op is not None:
            rb.insert(extra_op())
        return rb.neg(x)

    b = GraphBuilder("f")
    p, x = b.input("p", [1], "i1"), b.input("x", [4])
    if kind == "if":
        result = b.if_(p, [x], body, lambda rb, x: x)
    else:
        result = b.while_([x], lambda rb, v: rb.constant(np.bool_(False)), body)
    b.output(x)
    return b.module(), result.owner


def impure_op():
    return TestOp()  # no memory-effect trait: its effects are unknown


@pytest.mark.parametrize("kind", ["if", "while"])
def test_region_ops_are_pure_exactly_when_their_bodies_are(kind):
    _, pure_op = unused_region_op(kind)
    assert is_side_effect_free(pure_op)
    assert would_be_trivially_dead(pure_op)
    _, impure = unused_region_op(kind, impure_op)
    assert not is_side_effect_free(impure)
    assert not would_be_trivially_dead(impure)


@pytest.mark.parametrize("kind", ["if", "while"])
def test_dce_removes_unused_pure_region_ops_only(kind):
    def region_ops_left(module):
        DeadCodeElimination().apply(Context(), module)
        return [o.name for o in module.walk() if isinstance(o, IfOp | WhileOp)]

    assert region_ops_left(unused_region_op(kind)[0]) == []
    assert region_ops_left(unused_region_op(kind, impure_op)[0]) == [f"mir.{kind}"]


def test_traits_and_precision_classes():
    assert precision_class(IfOp) is Precision.DATA_MOVEMENT
    assert precision_class(WhileOp) is Precision.DATA_MOVEMENT
    assert precision_class(YieldOp) is None  # a terminator, like func.return
    _, op = unused_region_op("if")
    assert not would_be_trivially_dead(op.then_region.block.last_op)


def test_builder_rejects_branches_of_different_types():
    b = GraphBuilder("f")
    p, x = b.input("p", [1], "i1"), b.input("x", [4])
    message = r"then region yields \(tensor<4xf32>\) but else region yields \(tensor<4xf16>\)"
    with pytest.raises(VerifyException, match=message):
        b.if_(p, [x], lambda rb, x: x, lambda rb, x: rb.cast(x, "f16"))


def test_builder_region_using_an_outer_value_fails_verification():
    b = GraphBuilder("f")
    p, x = b.input("p", [1], "i1"), b.input("x", [4])
    b.output(b.if_(p, [], lambda rb: x, lambda rb: x))
    with pytest.raises(VerifyException, match="IsolatedFromAbove"):
        b.module().verify()


def test_region_builder_refuses_graph_arguments():
    b = GraphBuilder("f")
    p, x = b.input("p", [1], "i1"), b.input("x", [4])
    with pytest.raises(TypeError, match="block arguments"):
        b.if_(p, [x], lambda rb, x: rb.input("y", [4]), lambda rb, x: x)


# Verifier messages of the negative lit tests -------------------------------------------


test_invalid_lit_chunk_reports_its_expected_error = expected_error_test(INVALID)
