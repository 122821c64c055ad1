"""Small whole-model graphs the transform tests share (`rlx-grad`, `rlx-jvp`/`rlx-hvp` and
`rlx-vmap` against JAX): an MLP and a conv net with SCE losses, an `if`/`while` body, and
the inputs of the LLaMA graph. Values are drawn by the caller's `rand(*shape, scale=...)`,
so each test keeps its own seeded stream."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import SSAValue

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.ir.graph import find_function, graph_args
from rlx_xdsl.testing.llama import rope_tables

Rand = Callable[..., np.ndarray]


def mean_sce(b: GraphBuilder, logits: SSAValue, labels: SSAValue) -> None:
    """Output the batch mean of the softmax cross-entropy of `logits` against `labels`."""
    b.output(
        b.reduce(
            b.softmax_cross_entropy_with_logits(logits, labels), kind="mean", axes=[0]
        )
    )


def mlp(
    rows: int, features: int, hidden: int, classes: int, activation: str = "relu"
) -> ModuleOp:
    """`@loss(x[rows, features], labels[rows], w1, b1, w2, b2)`: two dense layers and mean SCE."""
    b = GraphBuilder("loss")
    x = b.input("x", [rows, features])
    labels = b.input("labels", [rows], "i64")
    w1, b1 = b.param("w1", [features, hidden]), b.param("b1", [hidden])
    w2, b2 = b.param("w2", [hidden, classes]), b.param("b2", [classes])
    h = getattr(b, activation)(b.add(b.matmul(x, w1), b1))
    mean_sce(b, b.add(b.matmul(h, w2), b2), labels)
    return b.module()


def conv_net_with_pooling() -> ModuleOp:
    """`@loss(x[2, 1, 8, 8], labels[2], w1, b1, w2, w3)`: conv, relu, max pool, conv, tanh,
    mean pool, a dense head and mean SCE."""
    b = GraphBuilder("loss")
    x = b.input("x", [2, 1, 8, 8])
    labels = b.input("labels", [2], "i64")
    w1, b1 = b.param("w1", [4, 1, 3, 3]), b.param("b1", [1, 4, 1, 1])
    w2, w3 = b.param("w2", [6, 4, 3, 3]), b.param("w3", [24, 10])
    h = b.relu(b.add(b.conv(x, w1, kernel_size=[3, 3], padding=[1, 1]), b1))
    h = b.pool(h, kind="max", kernel_size=[2, 2])
    h = b.tanh(b.conv(h, w2, kernel_size=[3, 3], padding=[1, 1]))
    h = b.pool(h, kind="mean", kernel_size=[2, 2])
    mean_sce(b, b.matmul(b.reshape(h, new_shape=[2, 24]), w3), labels)
    return b.module()


def if_and_while(b: GraphBuilder, x: SSAValue, w: SSAValue) -> SSAValue:
    """`mir.if` on the sign of `sum(x)` (`tanh(x w)` or `sin(x) x`), then a `mir.while` of
    `h <- tanh(h w) + h` that stops after 2 of its 3 allowed steps; `x[2, 4]`, `w[4, 4]`."""
    total = b.reduce(x, kind="sum", axes=[0, 1], keep_dim=True)
    positive = b.compare(total, b.constant(np.zeros((1, 1)), "f32"), "gt")
    h = b.if_(
        positive,
        [x, w],
        lambda rb, x, w: rb.tanh(rb.matmul(x, w)),
        lambda rb, x, w: rb.mul(rb.sin(x), x),
    )
    h, _, _ = b.while_(
        [h, w, b.constant(np.zeros(1), "f32")],
        lambda rb, h, w, i: rb.compare(i, rb.constant(np.full(1, 2.0), "f32"), "lt"),
        lambda rb, h, w, i: (
            rb.add(rb.tanh(rb.matmul(h, w)), h),
            w,
            rb.add(i, rb.constant(np.ones(1), "f32")),
        ),
        max_iterations=3,
    )
    return h


def llama_inputs(
    module: ModuleOp, x: np.ndarray, dims: dict, rand: Rand
) -> list[np.ndarray]:
    """`@llama`'s inputs: `x`, the rope tables, then each weight drawn by `rand` (norm gains
    near 1, the rest scaled by 0.3)."""
    cos, sin = rope_tables(dims["seq"], dims["dim"] // dims["n_heads"])
    inputs = [x, cos, sin]
    for arg in graph_args(find_function(module, "llama"))[3:]:
        shape = arg.type.get_shape()
        inputs.append(
            1.0 + rand(*shape, scale=0.1)
            if "gamma" in arg.name
            else rand(*shape, scale=0.3)
        )
    return inputs
