"""Run-time checks: `?` dims get the verifier's checks on their run-time shapes, every
result matches its declared type, and results too big for memory are refused."""

from __future__ import annotations

import numpy as np
import pytest
from xdsl.dialects.builtin import TensorType, f32
from xdsl.rewriter import Rewriter

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.dialects.mir.elementwise import NegOp
from rlx_xdsl.interpreters import KERNELS, checks
from rlx_xdsl.numerics import KernelError
from rlx_xdsl.run import run_function
from rlx_xdsl.shapes import DYNAMIC as D

F32 = np.float32


def run(build, *inputs):
    """Build `f(args) = build(b, *args)` from (name, shape, dtype) triples and run it."""
    b = GraphBuilder("f")
    args = [b.input(f"a{i}", shape, dtype) for i, (shape, dtype, _) in enumerate(inputs)]
    outs = build(b, *args)
    b.output(*(outs if isinstance(outs, tuple) else (outs,)))
    module = b.module()
    module.verify()
    return run_function(module, "f", [value for _, _, value in inputs])


def arg(shape, value, dtype="f32"):
    return (shape, dtype, value)


CASES = {
    "topk k above the run-time last dim": (
        lambda b, x: b.mir.topk(x, k=3),
        [arg([2, D], np.zeros((2, 2), F32))],
        r"'mir.topk' k = 3 exceeds the last dim 2 \(at run time\)",
    ),
    "rope head width": (
        lambda b, x, c, s: b.mir.rope(x, c, s, head_dim=4, n_rot=4),
        [arg([1, 2, D], np.zeros((1, 2, 6), F32)), arg([2, 2], np.ones((2, 2), F32)), arg([2, 2], np.zeros((2, 2), F32))],
        r"'mir.rope' x last dim 6 differs from head_dim 4 \(at run time\)",
    ),
    "attention head width": (
        lambda b, q, k, v: b.mir.attention(q, k, v, num_heads=1, head_dim=4),
        [arg([1, 1, 2, D], np.zeros((1, 1, 2, 3), F32))] + [arg([1, 1, 2, 4], np.zeros((1, 1, 2, 4), F32))] * 2,
        r"'mir.attention' q head dim 3 differs from head_dim 4 \(at run time\)",
    ),
    "attention GQA grouping": (
        lambda b, q, k, v: b.mir.attention(q, k, v, num_heads=4, head_dim=2),
        [arg([1, 4, 2, 2], np.zeros((1, 4, 2, 2), F32))] + [arg([1, D, 2, 2], np.zeros((1, 3, 2, 2), F32))] * 2,
        r"'mir.attention' num_heads 4 is not a multiple of the 3 k/v heads \(at run time\)",
    ),
    "group_norm channels": (
        lambda b, x, g, bb: b.mir.group_norm(x, g, bb, num_groups=2),
        [arg([1, D, 4], np.zeros((1, 3, 4), F32)), arg([D], np.ones(3, F32)), arg([D], np.zeros(3, F32))],
        r"'mir.group_norm' 3 channels do not split into 2 groups \(at run time\)",
    ),
    "one label for N rows": (
        lambda b, x, l: b.mir.softmax_cross_entropy_with_logits(x, l),
        [arg([4, 10], np.zeros((4, 10), F32)), arg([D], np.zeros(1, np.int64), "i64")],
        r"'mir.softmax_cross_entropy_with_logits' labels has 1 rows but logits has 4 \(at run time\)",
    ),
    "reshape element count": (
        lambda b, x: b.mir.reshape(x, new_shape=[2, 3]),
        [arg([D], np.zeros(5, F32))],
        r"'mir.reshape' cannot reshape \[5\] \(5 elements\) to new_shape \[2, 3\] \(at run time\)",
    ),
    "concat": (
        lambda b, x, y: b.mir.concat(x, y, axis=0),
        [arg([2, D], np.zeros((2, 4), F32)), arg([D, 3], np.zeros((5, 3), F32))],
        r"'mir.concat' operand #1 has shape \[5, 3\], which differs from \[2, 4\] outside axis 0 \(at run time\)",
    ),
    "matmul": (
        lambda b, x, y: b.mir.matmul(x, y),
        [arg([2, D], np.zeros((2, 4), F32)), arg([D, 3], np.zeros((5, 3), F32))],
        r"'mir.matmul' contraction dims 4 and 5 differ \(at run time\)",
    ),
    "broadcasting": (
        lambda b, x, y: b.mir.add(x, y),
        [arg([D], np.zeros(3, F32)), arg([4], np.zeros(4, F32))],
        r"'mir.add' shapes \[3\], \[4\] do not broadcast \(at run time\)",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_dynamic_dims_get_the_verifiers_check_at_run_time(case):
    build, inputs, message = CASES[case]
    with pytest.raises(KernelError, match=f"^{message}$"):
        run(build, *inputs)


def test_a_result_may_not_contradict_a_static_declared_dim():
    # [?] + [1] -> [?] is fine for any run-time size, but here the result is declared [4].
    b = GraphBuilder("f")
    x = b.input("x", [D])
    y = b.mir.add(x, b.input("y", [1]))
    y = Rewriter.replace_value_with_new_type(y, TensorType(f32, [4]))  # the verifier accepts ? against 4
    b.output(y)
    module = b.module()
    module.verify()
    with pytest.raises(KernelError, match=r"^'mir.add' result would have run-time type tensor<3xf32>, but its declared type is tensor<4xf32>$"):
        run_function(module, "f", [np.zeros(3, F32), np.zeros(1, F32)])


def test_a_kernel_result_of_the_wrong_shape_is_caught():
    original = KERNELS.remove(NegOp)
    KERNELS.add(NegOp, lambda op, x: (np.concatenate([x, x]),))
    try:
        with pytest.raises(KernelError, match=r"^'mir.neg' result has run-time shape \[4\], but its type is tensor<2xf32>$"):
            run(lambda b, x: b.mir.neg(x), arg([2], np.zeros(2, F32)))
    finally:
        KERNELS.remove(NegOp)
        KERNELS.add(NegOp, original)


def test_arguments_must_match_the_function_type():
    with pytest.raises(KernelError, match=r"argument #0 has run-time shape \[3\], but its type is tensor<2xf32>"):
        run(lambda b, x: b.mir.neg(x), arg([2], np.zeros(3, F32)))


def test_results_too_big_for_memory_are_refused_before_computing(monkeypatch):
    monkeypatch.setattr(checks, "available_memory", lambda: 100 * 2**20)
    x = np.zeros(1, F32)
    with pytest.raises(KernelError, match=r"^'mir.add' result tensor<8192x8192xf32> would need 268435456 bytes, more than the 104857600 bytes available$"):
        run(lambda b, x: b.mir.add(x, b.mir.constant(np.zeros((8192, 8192), F32))), arg([1], x))
