"""Train the MLP of `examples/train_mlp.mlir` with the gradient function `rlx-grad` builds.

    python examples/train_mlp.py [--steps 30] [--lr 0.5]

The same pipeline as the README's command line, in process: `rlx-prepare-ad`,
`rlx-grad{func=loss}`, `rlx-dce`; then plain gradient descent, each step one run
of `@loss_grad` (the loss and the four parameter gradients, seeded by
`d_output = 1`) on the reference interpreter. The data: 8 points in 3 classes
whose labels a random linear map decides, so a good fit exists.
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
PIPELINE = "rlx-prepare-ad,rlx-grad{func=loss},rlx-dce"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.5)
    args = parser.parse_args(argv)

    ctx = make_context()
    module = parse_module(GRAPH.read_text(), str(GRAPH), ctx)
    for pass_ in parse_pipeline(PIPELINE, get_all_passes()).passes:
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
    one = np.array(1.0, np.float32)
    losses = []
    for step in range(args.steps + 1):
        loss, *grads = run_function(module, "loss_grad", [x, labels, *params, one])
        losses.append(float(loss))
        if step % 10 == 0 or step == args.steps:
            print(f"step {step:3d}  loss {losses[-1]:.4f}")
        params = [p - args.lr * g for p, g in zip(params, grads)]
    print(f"loss decreased: {'yes' if losses[-1] < losses[0] else 'no'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
