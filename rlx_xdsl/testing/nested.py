"""Deeply nested control flow, for checking that passes scale linearly with nesting depth.

`nested_if(d)` is `@f(x: tensor<2x3xf32>, p: tensor<i1>)` with `d` nested `mir.if`s
on `p`: each `then` branch holds the next `if`, the innermost computes `tanh(x)`,
every `else` branch yields `x` (so `f(x, p) = tanh(x)` when `p`, else `x`). Its
op count grows linearly with `d`. The compile-time benchmark times passes on it
and `tests/transforms/test_nesting_depth.py` counts their work.
"""

from __future__ import annotations

NESTED_PASSES = (
    "rlx-lower-control-flow",
    "rlx-prepare-ad",
    "rlx-prepare-ad,rlx-grad{func=f wrt=0}",
    "rlx-jvp{func=f wrt=0}",
    "rlx-prepare-ad,rlx-hvp{func=f wrt=0}",
    "rlx-vmap{func=f batched=0 size=4}",
    "rlx-canonicalize",
)
"""The pipelines over region ops that must grow linearly with `nested_if`'s depth."""


def nested_if(depth: int) -> str:
    """The `@f` above with `depth` nested `mir.if`s, as MLIR text."""
    t = "tensor<2x3xf32>"
    lines = [f"func.func @f(%x0: {t}, %p0: tensor<i1>) -> {t} {{"]
    for k in range(depth):
        lines += [
            f"%v{k} = mir.if %p{k} (%x{k}, %p{k}) : (tensor<i1>, {t}, tensor<i1>) -> {t} {{",
            f"^bb0(%x{k + 1}: {t}, %p{k + 1}: tensor<i1>):",
        ]
    lines += [f"%in = mir.tanh %x{depth} : ({t}) -> {t}", f"mir.yield %in : {t}"]
    for k in reversed(range(depth)):
        lines += ["} else {", f"^bb0(%e{k}: {t}, %q{k}: tensor<i1>):", f"mir.yield %e{k} : {t}", "}"]
        lines.append(f"mir.yield %v{k} : {t}" if k else f"func.return %v0 : {t}")
    return "\n".join([*lines, "}"])
