"""Train the scan-based RNN of `examples/rnn_scan.mlir` for a few steps of gradient descent.

    python examples/train_rnn_scan.py [--steps 20] [--lr 0.5]

The graph is parsed once; `rlx-prepare-ad` (its scan bcasts become xs, the scan
saves its trajectory) and `rlx-train-step{func=rnn_loss optimizer=sgd}` add
`@rnn_loss_train_step`, which returns the loss and the three weights after one
step of gradient descent (the gradient is `rlx-grad`'s: the scan is
differentiated by one `mir.scan_backward`). Each step runs that function once on
the reference interpreter.

The data is a fixed random sequence batch; the targets come from a "teacher" RNN
of the same shape with other weights, so a good enough fit exists.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from rlx_xdsl.autodiff.prepare import prepare_for_ad
from rlx_xdsl.autodiff.train_step import TrainStepPass
from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.run import run_function

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


def train_step_module(lr: float):
    """The example graph with `@rnn_loss_train_step(h0, xs, target, w_h, w_x, w_o, step)
    -> (loss, w_h, w_x, w_o)` added: one SGD step on the weights (its `rlx.param` arguments)."""
    module = parse_module(GRAPH.read_text())
    prepare_for_ad(module)
    TrainStepPass(func=FUNCTION, optimizer="sgd", lr=lr).apply(make_context(), module)
    module.verify()
    return module


def train(steps: int, lr: float) -> list[float]:
    module = train_step_module(lr)
    rng = np.random.default_rng(0)
    h0 = np.zeros((BATCH, HIDDEN), np.float32)
    xs = rng.normal(0, 1, (STEPS, BATCH, FEATURES)).astype(np.float32)
    target = teacher_targets(h0, xs, rng)
    weights = [
        rng.normal(0, 0.3, shape).astype(np.float32)
        for shape in ((HIDDEN, HIDDEN), (FEATURES, HIDDEN), (HIDDEN, OUTPUTS))
    ]

    history = []
    for step in range(1, steps + 2):
        loss, *weights = run_function(module, f"{FUNCTION}_train_step", [h0, xs, target, *weights, np.float32(step)])
        history.append(float(loss))
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
