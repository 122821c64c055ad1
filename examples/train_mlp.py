"""Train the MLP of `examples/train_mlp.mlir` with the training step `rlx-train-step` builds.

    python examples/train_mlp.py [--steps 30] [--optimizer adamw|sgd] [--lr 0.05]

In process: `rlx-prepare-ad`, `rlx-train-step{func=loss optimizer=adamw lr=0.05}`,
`rlx-dce`; each step is one run of `@loss_train_step` on the reference
interpreter: it takes the data, the four parameters, their optimizer state
(AdamW's two moments per parameter, zeros at first) and the step number, and
returns the loss, the updated parameters and the updated state. The data: 8
points in 3 classes whose labels a random linear map decides, so a good fit exists.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from rlx_xdsl.context import make_context, parse_module
from rlx_xdsl.run import run_function
from rlx_xdsl.transforms import get_all_passes
from rlx_xdsl.transforms.pipeline import parse_pipeline

GRAPH = Path(__file__).with_name("train_mlp.mlir")
PIPELINE = "rlx-prepare-ad,rlx-train-step{{func=loss optimizer={optimizer} lr={lr}}},rlx-dce"
STATES = {"adamw": 2, "sgd": 0}
"""Optimizer state tensors per parameter (plain SGD has none)."""


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--optimizer", choices=sorted(STATES), default="adamw")
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args(argv)

    ctx = make_context()
    module = parse_module(GRAPH.read_text(), str(GRAPH), ctx)
    pipeline = PIPELINE.format(optimizer=args.optimizer, lr=float(args.lr))
    for pass_ in parse_pipeline(pipeline, get_all_passes()).passes:
        pass_.apply(ctx, module)

    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 4)).astype(np.float32)
    labels = np.argmax(x @ rng.standard_normal((4, 3)), axis=1).astype(np.int64)
    params = [
        (rng.standard_normal((4, 16)) * 0.5).astype(np.float32),
        np.zeros(16, np.float32),
        (rng.standard_normal((16, 3)) * 0.5).astype(np.float32),
        np.zeros(3, np.float32),
    ]
    state = [np.zeros_like(p) for p in params for _ in range(STATES[args.optimizer])]
    losses = []
    for step in range(args.steps + 1):
        number = np.array(step + 1, np.float32)  # the optimizer counts steps from 1
        loss, *rest = run_function(module, "loss_train_step", [x, labels, *params, *state, number])
        params, state = rest[: len(params)], rest[len(params) :]
        losses.append(float(loss))
        if step % 10 == 0 or step == args.steps:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
    print(f"loss decreased: {'yes' if losses[-1] < losses[0] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
