"""Interpreter benchmark: a `mir.scan` of N steps against the same body unrolled N times.

    python benchmarks/scan.py [--steps 1000] [--repeat 5]

The body is an RNN cell on a `[1, H]` row, `h' = tanh(h @ w + x_t)` (3 ops), with
`w` a bcast and `x_t` a step of `xs [N, 1, H]`. The unrolled graph is the same
cell written N times in one function that takes the N steps as N separate
arguments, so it has no slicing ops of its own: the comparison charges the scan
for everything it does per step (slicing `xs`, calling the body region).

Rows (each the best of --repeat runs of `rlx_xdsl.run.run_function`):

* `unrolled`: the flat function of N cells;
* `scan`: `mir.scan` returning the final carry;
* `scan trajectory`: the same scan keeping every carry;
* `scan K checkpoints`: keeping K = sqrt(N) carries;
* `scan_backward` with the full trajectory, and with K checkpoints (recomputing by
  bisection), with the cell's vjp as body.

`ratio` is the row's time over `unrolled`. The scan executes its body region in
place each step (nothing is parsed or rebuilt), so the ratio measures the cost of
the loop itself. Nothing here asserts on timings; see README.md for a measured run.
"""

from __future__ import annotations

import argparse
import math
import platform
import sys
import time
from collections.abc import Callable

import numpy as np
import xdsl
from xdsl.dialects.builtin import ModuleOp

from rlx_xdsl.building.builder import GraphBuilder
from rlx_xdsl.run import run_function

HIDDEN = 8


def cell(rb, h, w, x):
    return rb.tanh(rb.add(rb.matmul(h, w), x))


def cell_vjp(rb, h, x, dh):
    """vjp of `tanh(h @ w + x)` for a fixed `w` (a constant in the body: scan_backward has no bcasts)."""
    w = rb.constant(np.eye(HIDDEN, dtype=np.float32) * 0.5)
    y = rb.tanh(rb.add(rb.matmul(h, w), x))
    g = rb.mul(dh, rb.sub(rb.constant(np.float32(1)), rb.mul(y, y)))
    return rb.matmul(g, rb.transpose(w, perm=[1, 0])), g


def forward_cell(rb, h, x):
    w = rb.constant(np.eye(HIDDEN, dtype=np.float32) * 0.5)
    return rb.tanh(rb.add(rb.matmul(h, w), x))


def unrolled(steps: int) -> ModuleOp:
    b = GraphBuilder("f")
    h, w = b.input("h", [1, HIDDEN]), b.param("w", [HIDDEN, HIDDEN])
    xs = [b.input(f"x{t}", [1, HIDDEN]) for t in range(steps)]
    for x in xs:
        h = cell(b, h, w, x)
    b.output(h)
    return b.module()


def scanned(steps: int, **options) -> ModuleOp:
    b = GraphBuilder("f")
    h, w = b.input("h", [1, HIDDEN]), b.param("w", [HIDDEN, HIDDEN])
    xs = b.input("xs", [steps, 1, HIDDEN])
    b.output(b.scan(h, cell, steps, bcasts=[w], xs=[xs], **options))
    return b.module()


def backward(steps: int, checkpoints: int | None) -> ModuleOp:
    rows = checkpoints or steps
    b = GraphBuilder("f")
    h, xs = b.input("h", [1, HIDDEN]), b.input("xs", [steps, 1, HIDDEN])
    trajectory, upstream = b.input("traj", [rows, 1, HIDDEN]), b.input("up", [1, HIDDEN])
    recompute = forward_cell if checkpoints is not None and checkpoints < steps else None
    result = b.scan_backward(
        h, trajectory, upstream, cell_vjp, steps, xs=[xs], num_checkpoints=checkpoints, forward=recompute
    )
    b.output(*result)
    return b.module()


def best_time(run: Callable[[], object], repeat: int) -> float:
    best = math.inf
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args(argv)
    n = args.steps
    k = max(1, round(math.sqrt(n)))
    rng = np.random.default_rng(0)
    h = rng.standard_normal((1, HIDDEN)).astype(np.float32)
    w = (rng.standard_normal((HIDDEN, HIDDEN)) * 0.3).astype(np.float32)
    xs = rng.standard_normal((n, 1, HIDDEN)).astype(np.float32)
    up = rng.standard_normal((1, HIDDEN)).astype(np.float32)
    traj = rng.standard_normal((n, 1, HIDDEN)).astype(np.float32)

    flat = unrolled(n)
    cases: list[tuple[str, ModuleOp, list[np.ndarray]]] = [
        ("unrolled", flat, [h, w, *xs]),
        ("scan", scanned(n), [h, w, xs]),
        ("scan trajectory", scanned(n, save_trajectory=True), [h, w, xs]),
        (f"scan {k} checkpoints", scanned(n, save_trajectory=True, num_checkpoints=k), [h, w, xs]),
        ("scan_backward full", backward(n, None), [h, xs, traj, up]),
        (f"scan_backward {k} checkpoints", backward(n, k), [h, xs, traj[:k], up]),
    ]
    (expected,) = run_function(flat, None, cases[0][2])
    (got,) = run_function(cases[1][1], None, cases[1][2])
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)  # same computation, checked once

    print(f"# mir.scan vs unrolled: {n} steps of h' = tanh(h @ w + x_t), H = {HIDDEN}; best of {args.repeat}")
    print(f"# xDSL {xdsl.__version__}; Python {platform.python_version()}; {platform.machine()}")
    print(f"{'case':<28} {'ops':>7} {'seconds':>9} {'us/step':>9} {'ratio':>7}")
    baseline = None
    for name, module, inputs in cases:
        seconds = best_time(lambda m=module, i=inputs: run_function(m, None, i), args.repeat)
        baseline = baseline or seconds
        ops = sum(1 for _ in module.walk())
        print(f"{name:<28} {ops:>7} {seconds:>9.4f} {seconds / n * 1e6:>9.1f} {seconds / baseline:>7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
