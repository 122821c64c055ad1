"""Train the scan-based RNN of `examples/rnn_scan.mlir` for a few steps of gradient descent.

    python examples/train_rnn_scan.py [--steps 20] [--lr 0.5]

The graph is parsed once and run by the reference interpreter; the gradient of
the loss with respect to the three weights is taken by central finite
differences through the same interpreter (two runs per weight entry). Reverse-mode
autodiff (`rlx-grad`, which will differentiate the scan through `mir.scan_backward`)
replaces this once it lands; the graph does not change.

The data is a fixed random sequence batch; the targets come from a "teacher" RNN
of the same shape with other weights, so a good enough fit exists.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from rlx_xdsl.context import parse_module
from rlx_xdsl.interpreters import run_function

GRAPH = Path(__file__).with_name("rnn_scan.mlir")
FUNCTION = "rnn_loss"
STEPS, BATCH, FEATURES, HIDDEN, OUTPUTS = 8, 2, 3, 4, 2


def teacher_targets(h0: np.ndarray, xs: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """What an RNN with other (random) weights predicts: the targets to fit."""
    w_h, w_x = rng.normal(0, 0.5, (HIDDEN, HIDDEN)), rng.normal(0, 0.5, (FEATURES, HIDDEN))
    w_o = rng.normal(0, 0.5, (HIDDEN, OUTPUTS))
    h = h0.astype(np.float64)
    for x in xs:
        h = np.tanh(h @ w_h + x @ w_x)
    return (h @ w_o).astype(np.float32)


def train(steps: int, lr: float, eps: float = 1e-3) -> list[float]:
    module = parse_module(GRAPH.read_text())
    module.verify()
    rng = np.random.default_rng(0)
    h0 = np.zeros((BATCH, HIDDEN), np.float32)
    xs = rng.normal(0, 1, (STEPS, BATCH, FEATURES)).astype(np.float32)
    target = teacher_targets(h0, xs, rng)
    weights = [
        rng.normal(0, 0.3, shape).astype(np.float32)
        for shape in ((HIDDEN, HIDDEN), (FEATURES, HIDDEN), (HIDDEN, OUTPUTS))
    ]

    def loss() -> float:
        (value,) = run_function(module, FUNCTION, [h0, xs, target, *weights])
        return float(value)

    history = [loss()]
    for _ in range(steps):
        grads = []
        for w in weights:
            grad = np.zeros_like(w)
            for index in np.ndindex(w.shape):
                saved = w[index]
                w[index] = saved + eps
                up = loss()
                w[index] = saved - eps
                down = loss()
                w[index] = saved
                grad[index] = (up - down) / (2 * eps)
            grads.append(grad)
        for w, grad in zip(weights, grads):
            w -= lr * grad
        history.append(loss())
    return history


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args(argv)
    history = train(args.steps, args.lr)
    for step, value in enumerate(history):
        print(f"step {step:3d}  loss {value:.6f}")
    print(f"loss decreased: {'yes' if history[-1] < history[0] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
